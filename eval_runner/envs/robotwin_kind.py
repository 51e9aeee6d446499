"""The RoboTwin 2.0 env kind: its options, its task listing, and a run's environment under the one loop.

Suites: ``robotwin`` (the brief's 12 tasks), ``robotwin_short`` / ``_medium`` / ``_long`` /
``_extra_long`` (one horizon group), ``robotwin_long_xl`` (the brief's merged column), and
``robotwin/<task>`` for any of the runtime's 50 tasks. The runtime lives in its own venv
(``make setup-robotwin``) or image; this module imports nothing of it, so ``--help`` lists these
options in the main venv too. The scenes themselves are :mod:`eval_runner.envs.robotwin_env`'s.

The result has the same contract as a LIBERO run (per-task episodes with their seeds and steps);
what only RoboTwin has goes to ``provenance.extra["robotwin"]``: the seeds the expert could not solve
(and why), each task's step limit, the task config, the planner and the asset snapshot.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from eval_runner.envs.kinds import EnvKind, EnvOptions, EnvRun, Spaces
from eval_runner.envs.robotwin_policies import JOINTS
from eval_runner.envs.robotwin_seeds import MAX_SKIPS, start_seed
from rlinf_bench.contracts import EvalRun, Provenance, RunResult
from rlinf_bench.errors import ConfigError
from rlinf_bench.provenance import package_versions

if TYPE_CHECKING:
    from eval_runner.envs.robotwin_assets import AssetsRoot
    from eval_runner.envs.robotwin_env import RoboTwinScenes
    from eval_runner.envs.robotwin_tasks import RoboTwinTask
    from eval_runner.policies.base import Policy
    from eval_runner.settings import EvalSettings

__all__ = ["KIND", "RUNTIME_PACKAGES", "SPACES", "RoboTwinKind", "RoboTwinOptions", "RoboTwinRun", "selected_tasks"]

SPACES = Spaces(
    JOINTS,
    "qpos targets: left arm 6 + gripper, right arm 6 + gripper",
    "{'observation': the runtime's get_obs() dict (its cameras' images, joint_action, endpose)}",
)
#: Packages whose versions a RoboTwin result records besides the usual ones.
RUNTIME_PACKAGES = ("rlinf-robotwin-runtime", "sapien", "mplib", "torch", "numpy")
PROTOCOL = (
    "seeds 100000*(1+seed) upward; expert-unsolvable seeds skipped; success = check_success() "
    "within the task's step limit"
)


class RoboTwinOptions(EnvOptions):
    """RoboTwin-only settings of a run (the ``--assets``, ``--task-config``, ``--planner`` and
    ``--instruction-type`` flags)."""

    assets: str | None = Field(default=None, description="None: $ROBOTWIN_ASSETS_ROOT, else the runtime's (cwd)")
    task_config: str = Field(default="demo_randomized", description="the runtime's domain-randomized eval setting")
    planner: Literal["mplib", "curobo"] = Field(default="mplib", description="the expert's motion planner")
    instruction_type: Literal["seen", "unseen"] = "unseen"
    runtime: str | None = Field(
        default=None,
        description="TEST-ONLY 'module:attribute' of a stand-in for the installed runtime's task envs (never a flag)",
    )


def selected_tasks(run: EvalRun) -> list[RoboTwinTask]:
    """The run's tasks, read from the installed runtime; RoboTwin-specific request checks first."""
    from eval_runner.envs.robotwin_tasks import suite_tasks
    from rlinf_bench.suites import get_suite, resolve_task_ids

    if run.max_steps is not None:
        raise ConfigError(
            f"max_steps={run.max_steps}: RoboTwin tasks stop at their own step limit (the runtime's "
            "_eval_step_limit config, as the official protocol does); leave max_steps unset"
        )
    start_seed(run.seed)  # a negative run seed has no block of seeds
    ids = resolve_task_ids(get_suite(run.suite), run.task_ids)
    tasks = suite_tasks(run.suite)
    return [tasks[i] for i in ids]


class RoboTwinRun(EnvRun):
    """A RoboTwin run: each task stops at its own step limit; episode seeds come from expert-checked walks."""

    tasks: list[RoboTwinTask]  # type: ignore[assignment]

    def __init__(self, run: EvalRun, options: RoboTwinOptions, settings: EvalSettings) -> None:
        tasks = selected_tasks(run)
        # settle_steps=0: RoboTwin scenes start settled (no LIBERO-style zero-action warm-up).
        super().__init__(
            run,
            settings,
            tasks=tasks,
            max_steps=max((t.step_limit for t in tasks), default=1),
            settle_steps=0,
            spaces=SPACES,
        )
        self.options = options
        self.limits = {t.task_id: t.step_limit for t in tasks}
        self.assets: AssetsRoot | None = None
        self.skipped: dict[str, dict[int, str]] = {t.name: {} for t in tasks}  # task -> {seed: reason}
        self._known: dict[tuple[int, int], dict[int, Any]] = {}

    def step_limit(self, task_id: int) -> int:
        return self.limits[task_id]

    def first_start(self, seed: int) -> int:
        """Episode 0's walk starts at ``100000 * (1 + seed)``."""
        return start_seed(seed)

    def prepare(self, provenance: Provenance) -> Provenance:
        """The asset snapshot, checked with the runtime's validator before any worker builds a scene."""
        from eval_runner.envs.robotwin_assets import resolve_assets

        self.assets = resolve_assets(self.options.assets)
        return provenance.model_copy(
            update={
                "packages": {**provenance.packages, **package_versions(RUNTIME_PACKAGES)},
                "extra": {**provenance.extra, "robotwin": self._record()},
            }
        )

    def _record(self) -> dict[str, Any]:
        opts = self.options
        return {
            "protocol": PROTOCOL,
            "first_seed": start_seed(self.run.seed),
            "task_config": opts.task_config,
            "planner": opts.planner,
            "instruction_type": opts.instruction_type,
            "step_limits": {t.name: t.step_limit for t in self.tasks},
            "skipped_seeds": self._skipped_record(),
            "assets": self.assets.identity if self.assets is not None else None,
        }

    def _skipped_record(self) -> dict[str, list[dict[str, Any]]]:
        return {
            task: [{"seed": seed, "reason": why} for seed, why in sorted(seeds.items())]
            for task, seeds in self.skipped.items()
        }

    def resumed_from(self, previous: RunResult) -> None:
        """An earlier attempt's walks: each finished episode's seed + 1 starts the next episode's walk, and the
        seeds it skipped stay recorded."""
        record = previous.provenance.extra.get("robotwin", {}) if previous.provenance else {}
        for task, skips in (record.get("skipped_seeds") or {}).items():
            for skip in skips:
                self.skipped.setdefault(task, {})[int(skip["seed"])] = str(skip["reason"])
        for task in previous.tasks:
            chain = self._known.setdefault((task.task_id, self.run.seed), {})
            for episode in task.episodes:
                chain[episode.init_state + 1] = episode.seed + 1

    def known_starts(self) -> dict[tuple[int, int], dict[int, Any]]:
        return self._known

    def record_start(self, task_id: int, notes: Mapping[str, Any], extra: dict[str, Any]) -> None:
        """The seeds a start's walk skipped (a replayed walk finds the same ones: kept once, in seed order)."""
        name = next(t.name for t in self.tasks if t.task_id == task_id)
        for seed, reason in notes.get("skipped", ()):
            self.skipped.setdefault(name, {})[int(seed)] = str(reason)
        extra.setdefault("robotwin", {})["skipped_seeds"] = self._skipped_record()

    def scenes(self, policy: Policy) -> RoboTwinScenes:
        from eval_runner.envs.robotwin_env import RoboTwinScenes

        if self.assets is None:
            raise ConfigError("RoboTwin scenes asked for before the assets were checked (EnvRun.prepare)")
        opts = self.options
        return RoboTwinScenes(
            tasks=tuple(self.tasks),
            assets=self.assets,
            task_config=opts.task_config,
            planner=opts.planner,
            instruction_type=opts.instruction_type,
            max_skips=MAX_SKIPS,
            runtime=opts.runtime,
        )


class RoboTwinKind(EnvKind):
    """RoboTwin 2.0's suites, in .venv-robotwin or the RoboTwin image."""

    name = "robotwin"
    spaces = SPACES
    title = "RoboTwin 2.0 suites (robotwin, robotwin_<group>, robotwin/<task>; in .venv-robotwin or the RoboTwin image)"
    options = RoboTwinOptions
    flags = ("assets", "task_config", "planner", "instruction_type")

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        """The RoboTwin-only options (None when not given: :class:`RoboTwinOptions` has the defaults)."""
        group.add_argument(
            "--assets",
            metavar="DIR",
            help="asset snapshot root (default: $ROBOTWIN_ASSETS_ROOT, else the runtime's: cwd)",
        )
        group.add_argument("--task-config", help="the runtime's task config: demo_randomized (default) | demo_clean")
        group.add_argument("--planner", choices=("mplib", "curobo"), help="the expert's motion planner (default mplib)")
        group.add_argument(
            "--instruction-type", choices=("seen", "unseen"), help="instruction templates (default unseen)"
        )

    def list_tasks(self, suite: str) -> str:
        """Task ids, step limits, horizon groups and descriptions, read from the installed runtime."""
        from eval_runner.envs.robotwin_tasks import suite_tasks
        from rlinf_bench.robotwin import group_of_task

        tasks = suite_tasks(suite)
        lines = [f"{suite}: {len(tasks)} tasks (RoboTwin 2.0; each stops at its own step limit)"]
        for t in tasks:
            group = group_of_task(t.name) or "-"
            lines.append(f"{t.task_id:>3}  {t.name}  (limit {t.step_limit}, horizon {group})\n     {t.language!r}")
        lines.append(self.spaces.describe())
        return "\n".join(lines)

    def check_run(self, run: EvalRun) -> None:
        """The suite, its task ids, and the trial count against the protocol's episodes per task.

        RoboTwin's initial states are seeds walked at run time, not files: the count is the catalogue's.
        """
        from rlinf_bench.suites import get_suite, resolve_task_ids

        suite = get_suite(run.suite)
        resolve_task_ids(suite, run.task_ids)
        if run.trials_per_task > suite.init_states:
            raise ConfigError(
                f"trials_per_task={run.trials_per_task} but suite {suite.name} evaluates at most {suite.init_states} "
                f"episodes per task (the official protocol's): set trials_per_task (--trials) to at most "
                f"{suite.init_states}"
            )

    def setup(self, run: EvalRun, options: EnvOptions, settings: EvalSettings) -> RoboTwinRun:
        if not isinstance(options, RoboTwinOptions):
            raise ConfigError(f"a RoboTwin run needs RoboTwinOptions, not {type(options).__name__}")
        return RoboTwinRun(run, options, settings)


KIND = RoboTwinKind()
