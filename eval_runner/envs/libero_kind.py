"""The LIBERO env kind: MuJoCo scenes (:mod:`eval_runner.envs.libero_scene`) under the one loop.

Its options are the evaluate command's general ones (``--protocol``, ``--settle-steps``, ``--workers``…);
it adds none of its own. Its episodes replay OpenVLA-OFT's reference loop: fixed initial state *i* of a
task, reset from the numpy RNG state that loop has before its *i*-th reset (:mod:`eval_runner.scheduler`).
At the Job's edge it checks the trial count against the initial states the installed LIBERO ships; before
the loop starts, the doctor's checks (:func:`rlinf_doctor.preflight.eval_preflight`) stop a broken setup in
seconds, with the fix in the result file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_runner.envs.kinds import EnvKind, EnvOptions, EnvRun, Spaces
from eval_runner.envs.published_listing import published_listing, unavailable_record, unavailable_tasks
from eval_runner.policies.base import ACTION_DIM
from rlinf_bench.contracts import EvalRun, Provenance
from rlinf_bench.errors import ConfigError

if TYPE_CHECKING:
    from eval_runner.envs.libero_scene import LiberoScenes
    from eval_runner.policies.base import Policy
    from eval_runner.settings import EvalSettings
    from rlinf_bench.suites import TaskInfo

__all__ = ["KIND", "SPACES", "LiberoKind", "LiberoRun"]

SPACES = Spaces(
    ACTION_DIM,
    "OSC_POSE delta xyz, delta rpy, gripper",
    "the cameras and proprioception the policy's ObservationSpec names (<camera>_image uint8 HxWx3, robot0_* float32)",
)


class LiberoRun(EnvRun):
    """A LIBERO run: the suite's tasks, the protocol's max and settle steps, the reference RNG replay."""

    tasks: list[TaskInfo]  # type: ignore[assignment]  # LIBERO's own (policies check them)

    def __init__(self, run: EvalRun, settings: EvalSettings) -> None:
        from eval_runner.episode_settings import resolve_protocol
        from rlinf_bench.suites import get_suite, resolve_task_ids

        suite = get_suite(run.suite)
        protocol = resolve_protocol(run, settings)  # explicit values over the profile's
        wanted = resolve_task_ids(suite, run.task_ids)
        #: a published robustness suite's variants this machine cannot run -> why: left out, and recorded
        self.unavailable = unavailable_tasks(run.suite, wanted)
        super().__init__(
            run,
            settings,
            tasks=[suite.task(t) for t in wanted if t not in self.unavailable],
            max_steps=protocol.max_steps,
            settle_steps=protocol.settle_steps,
            spaces=SPACES,
            protocol=protocol,
        )

    def first_start(self, seed: int) -> Any:
        from eval_runner.scheduler import seeded_state

        return seeded_state(seed)

    def prepare(self, provenance: Provenance) -> Provenance:
        """LIBERO's config (offline, no prompt) and assets link; their paths go to the provenance."""
        from eval_runner.libero_setup import configure_libero

        paths = configure_libero(self.settings.cache_dir, package=self.package)
        extra = {**provenance.extra, "libero_config": str(paths.config_dir), "libero_assets": str(paths.assets_dir)}
        if self.unavailable:
            extra["unavailable_variants"] = unavailable_record(self.run.suite, self.unavailable)
        return provenance.model_copy(update={"extra": extra})

    @property
    def package(self) -> str:
        """The LIBERO distribution whose scene classes build this suite's tasks."""
        return self.tasks[0].package if self.tasks else "libero"

    def scenes(self, policy: Policy) -> LiberoScenes:
        """The scenes for ``policy``: its cameras at the run's resolution; the protocol gets its decoding."""
        from eval_runner.envs.libero_scene import LiberoScenes
        from eval_runner.episode_settings import render_spec, video_resolution, with_policy

        if self.protocol is None:
            raise ConfigError("a LIBERO run has a protocol from its setup (runner bug)")
        self.protocol = with_policy(self.protocol, self.run, policy)
        policy.check_tasks(list(self.tasks))  # refuse before any worker starts (the expert's goal predicates)
        return LiberoScenes(
            suite=self.run.suite,
            obs_spec=render_spec(policy.obs_spec, self.protocol, video_resolution=video_resolution(self.run)),
            horizon=self.max_steps + self.settle_steps,
            settle_gripper=self.protocol.settle_gripper,
            cache_dir=self.settings.cache_dir,
            scene_hook=self.settings.scene_hook,
            package=self.package,
        )


class LiberoKind(EnvKind):
    """LIBERO's suites (libero_spatial, _object, _goal, _10, _90), and LIBERO-plus's and LIBERO-PRO's."""

    name = "libero"
    title = "LIBERO suites"
    spaces = SPACES
    perturbable = True

    def list_tasks(self, suite: str) -> str:
        """The ``--list-tasks`` table: id, max steps, task name and the instruction the policy receives."""
        from rlinf_bench.suites import get_suite

        spec = get_suite(suite)
        lines = [
            f"{spec.name}: {spec.n_tasks} tasks, {spec.init_states} initial states each, max steps {spec.max_steps}"
        ]
        lines += [f'{t.task_id:>3}  {t.name}\n     "{t.language}"' for t in spec.tasks()]
        lines += published_listing(spec.name)
        lines.append(self.spaces.describe())
        return "\n".join(lines)

    def check_run(self, run: EvalRun) -> None:
        """The suite, its task ids, and one initial state per trial in each task's file of the installed LIBERO."""
        from eval_runner.init_states import load_init_states
        from rlinf_bench.suites import get_suite, resolve_task_ids

        suite = get_suite(run.suite)
        wanted = resolve_task_ids(suite, run.task_ids)
        unavailable = unavailable_tasks(run.suite, wanted)
        if len(unavailable) == len(wanted):
            raise ConfigError(
                f"none of the {len(wanted)} task(s) of {suite.name} asked for can run here: "
                f"{next(iter(unavailable.values()))}; `evaluate --suite {suite.name} --list-tasks` lists those that can"
            )
        counts: dict[Path, int] = {}  # LIBERO-plus's variants share their base task's file
        for task_id in (t for t in wanted if t not in unavailable):
            task = suite.task(task_id)
            if task.init_states_file not in counts:
                counts[task.init_states_file] = len(load_init_states(task.init_states_file))
            present = counts[task.init_states_file]
            if run.trials_per_task > present:
                raise ConfigError(
                    f"trials_per_task={run.trials_per_task} but task {task_id} of {suite.name} ({task.name}) has "
                    f"{present} initial states in {task.init_states_file}, one trial each: set trials_per_task "
                    f"(--trials) to at most {present}"
                )

    def preflight(
        self, run: EvalRun, *, out: str, settings: EvalSettings, command: Sequence[str], provenance: Provenance
    ) -> dict[str, Any]:
        """The doctor's eval checks (rendering, assets, GPU, the policy server); a failure writes the result."""
        from rlinf_doctor.preflight import eval_preflight

        report = eval_preflight(
            run,
            out=out,
            cache_dir=settings.cache_dir,
            command=command,
            provenance=provenance,
            write=not settings.resume,
        )
        return report.record()

    def setup(self, run: EvalRun, options: EnvOptions, settings: EvalSettings) -> LiberoRun:
        return LiberoRun(run, settings)


KIND = LiberoKind()
