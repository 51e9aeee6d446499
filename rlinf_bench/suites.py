"""Registry of benchmark suites: task counts, default horizons, and (lazily) LIBERO's task names.

Importing this module is cheap (no simulator import): Lambdas use it to validate requests. Task names,
language instructions and file paths are read from the installed LIBERO package only when asked for,
and even then without importing LIBERO itself (its import writes a config file and pulls in torch).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from rlinf_bench import robotwin
from rlinf_bench.contracts.suite_names import SUITE_ALIASES, canonical_suite_name
from rlinf_bench.errors import ConfigError, SimulatorError, UnknownSuiteError
from rlinf_bench.registry import Registry, unknown_name

__all__ = [
    "DEFAULT_SETTLE_STEPS",
    "INIT_STATES_PER_TASK",
    "SUITES",
    "SuiteSpec",
    "TaskInfo",
    "get_suite",
    "resolve_task_ids",
    "suite_names",
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


@dataclass(frozen=True)
class SuiteSpec:
    """A benchmark suite: how many tasks, how many steps an episode may take."""

    name: str
    n_tasks: int
    max_steps: int
    settle_steps: int = DEFAULT_SETTLE_STEPS
    init_states: int = INIT_STATES_PER_TASK
    simulator: str = "libero"
    description: str = ""
    #: RoboTwin suites name their tasks here (LIBERO's come from the installed package).
    task_names: tuple[str, ...] = ()

    def tasks(self) -> list[TaskInfo]:
        """Every task, in LIBERO's order (task order 0), read from the installed LIBERO package."""
        if self.simulator != "libero":
            raise SimulatorError(f"{self.name} is a {self.simulator} suite: its tasks come from eval_runner.robotwin")
        return _libero_tasks(self.name)

    def task(self, task_id: int) -> TaskInfo:
        """One task; raises :class:`ConfigError` naming the valid range when ``task_id`` is out of range."""
        resolve_task_ids(self, [task_id])
        return self.tasks()[task_id]


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
    return SuiteSpec(
        name,
        len(tasks),
        max(robotwin.step_limit(t) for t in tasks),
        settle_steps=0,
        init_states=robotwin.OFFICIAL_EPISODES_PER_TASK,
        simulator="robotwin",
        description=f"RoboTwin 2.0: {', '.join(tasks)}",
        task_names=tuple(tasks),
    )


for _name in robotwin.robotwin_group_suites():
    SUITES.register(_name, value=_robotwin_spec(_name))


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
