"""The RoboTwin env kind's run: assets check, per-task seed walks, policy episodes, the RunResult.

The result has the same contract as a LIBERO run (per-task episodes with their seeds and steps);
what only RoboTwin has goes to ``provenance.extra["robotwin"]``: the seeds the expert could not solve
(and why), each task's step limit, the task config, the planner and the asset snapshot. The policy
comes from the one registry (:func:`eval_runner.policies.factory.load_policy`, env kind ``robotwin``)
and the result goes out through the one :class:`~eval_runner.result_writer.ResultWriter`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_runner.envs.robotwin_assets import AssetsRoot
from eval_runner.envs.robotwin_seeds import SeedWalk, SkippedSeed, start_seed
from eval_runner.envs.robotwin_tasks import RoboTwinTask, suite_tasks
from eval_runner.policies.base import Policy
from eval_runner.result_writer import ResultWriter
from eval_runner.run_result import utc_now
from rlinf_bench.contracts import EpisodeResult, EvalRun, Provenance, RunResult, RunStatus, TaskResult, Timings
from rlinf_bench.errors import ConfigError, RlinfBenchError, SimulatorError
from rlinf_bench.provenance import collect_provenance, package_versions
from rlinf_bench.suites import get_suite, resolve_task_ids
from rlinf_doctor.nvml_gpus import NvmlGpus

log = logging.getLogger(__name__)

__all__ = ["RoboTwinOptions", "build_result", "evaluate_robotwin", "selected_tasks"]

RUNTIME_PACKAGES = ("rlinf-robotwin-runtime", "sapien", "mplib", "torch", "numpy")


@dataclass(frozen=True)
class RoboTwinOptions:
    """RoboTwin-only settings of a run."""

    assets: str | None = None  # None: $ROBOTWIN_ASSETS_ROOT, else the runtime's default (cwd)
    task_config: str = "demo_randomized"  # the runtime's domain-randomized eval setting
    planner: str = "mplib"  # the expert's motion planner; CuRobo is not on PyPI
    instruction_type: str = "unseen"
    max_skips: int = 200


@dataclass
class _Progress:
    episodes: dict[int, list[EpisodeResult]] = field(default_factory=dict)
    skipped: dict[str, list[SkippedSeed]] = field(default_factory=dict)
    started_at: str = field(default_factory=utc_now)
    t0: float = field(default_factory=time.perf_counter)
    env_steps: int = 0


def selected_tasks(run: EvalRun) -> list[RoboTwinTask]:
    """The run's tasks, read from the installed runtime; RoboTwin-specific request checks first."""
    if run.max_steps is not None:
        raise ConfigError(
            f"max_steps={run.max_steps}: RoboTwin tasks stop at their own step limit (the runtime's "
            "_eval_step_limit config, as the official protocol does); leave max_steps unset"
        )
    ids = resolve_task_ids(get_suite(run.suite), run.task_ids)
    tasks = suite_tasks(run.suite)
    return [tasks[i] for i in ids]


def build_result(
    run: EvalRun,
    tasks: Sequence[RoboTwinTask],
    episodes: dict[int, list[EpisodeResult]],
    status: RunStatus,
    provenance: Provenance,
    *,
    error: str | None = None,
    timings: Timings | None = None,
) -> RunResult:
    """A validated RunResult from the episodes finished so far (tasks without episodes are listed too)."""
    results = [
        TaskResult.from_episodes(t.task_id, t.name, run.trials_per_task, episodes.get(t.task_id, []), t.language)
        for t in tasks
    ]
    # settle_steps=0: RoboTwin scenes start settled (no LIBERO-style zero-action warm-up).
    return RunResult.of_run(
        run,
        status,
        max_steps=max((t.step_limit for t in tasks), default=1),
        settle_steps=0,
        tasks=results,
        error=error,
        timings=timings,
        provenance=provenance,
    )


def _provenance(
    command: Sequence[str] | None, opts: RoboTwinOptions, run: EvalRun, tasks: Sequence[RoboTwinTask]
) -> Provenance:
    prov = collect_provenance(gpus=NvmlGpus(), command=command)
    packages = {**prov.packages, **package_versions(RUNTIME_PACKAGES)}
    extra = dict(prov.extra)
    extra["robotwin"] = {
        "protocol": "seeds 100000*(1+seed) upward; expert-unsolvable seeds skipped; success = check_success() "
        "within the task's step limit",
        "first_seed": start_seed(run.seed),
        "task_config": opts.task_config,
        "planner": opts.planner,
        "instruction_type": opts.instruction_type,
        "step_limits": {t.name: t.step_limit for t in tasks},
        "skipped_seeds": {},
    }
    return prov.model_copy(update={"packages": packages, "extra": extra})


def _with_skips(p: _Progress, prov: Provenance) -> Provenance:
    extra = dict(prov.extra)
    extra["robotwin"] = {
        **extra["robotwin"],
        "skipped_seeds": {k: [{"seed": s.seed, "reason": s.reason} for s in v] for k, v in p.skipped.items()},
    }
    return prov.model_copy(update={"extra": extra})


def evaluate_robotwin(
    run: EvalRun,
    *,
    out_path: str,
    opts: RoboTwinOptions | None = None,
    command: Sequence[str] | None = None,
    s3_client: Any = None,
) -> RunResult:
    """Evaluate ``run`` on its RoboTwin suite; the result is written to ``out_path`` as it grows.

    Raises :class:`~eval_runner.envs.robotwin_assets.AssetsMissingError` (after writing a failed result)
    when the asset snapshot is absent, before any scene is built.
    """
    from eval_runner.envs.robotwin_assets import resolve_assets

    opts = opts or RoboTwinOptions()
    writer = ResultWriter(out_path, s3_client=s3_client)
    tasks: list[RoboTwinTask] = []
    prov = _provenance(command, opts, run, tasks)
    p = _Progress()

    def result(status: RunStatus, error: str | None = None) -> RunResult:
        timings = Timings(
            started_at=p.started_at,
            finished_at=utc_now(),
            wall_s=round(time.perf_counter() - p.t0, 3),
            env_steps=p.env_steps,
        )
        return build_result(run, tasks, p.episodes, status, _with_skips(p, prov), error=error, timings=timings)

    try:
        tasks.extend(selected_tasks(run))  # a misspelt suite or task id fails here, with a result file
        prov.extra["robotwin"]["step_limits"] = {t.name: t.step_limit for t in tasks}
        assets = resolve_assets(opts.assets)
        prov.extra["robotwin"]["assets"] = assets.identity
        _run_tasks(run, tasks, opts, assets, p, prov, lambda: writer.write(result(RunStatus.INCOMPLETE)))
    except KeyboardInterrupt:
        writer.write(result(RunStatus.INCOMPLETE, "interrupted"), final=True)
        raise
    except RlinfBenchError as exc:
        writer.write(result(RunStatus.FAILED, str(exc)), final=True)
        raise
    except Exception as exc:  # a simulator error deep in SAPIEN: keep its message, not only a traceback
        writer.write(result(RunStatus.FAILED, f"{type(exc).__name__}: {exc}"), final=True)
        raise SimulatorError(f"RoboTwin run failed: {type(exc).__name__}: {exc}") from exc
    final = result(RunStatus.COMPLETE)
    writer.write(final, final=True)
    return final


def _run_tasks(
    run: EvalRun,
    tasks: Sequence[RoboTwinTask],
    opts: RoboTwinOptions,
    assets: AssetsRoot,
    p: _Progress,
    prov: Provenance,
    on_episode: Callable[[], object],
) -> None:
    """Every task's episodes, with the policy of the one registry (its description goes to the provenance)."""
    from eval_runner.envs.robotwin_policies import ENV_KIND
    from eval_runner.policies.factory import load_policy

    if run.workers > 1:
        log.warning("RoboTwin runs one scene at a time (docs/robotwin.md); workers=%d is not used", run.workers)
    checkpoint = Path(run.checkpoint.uri) if run.checkpoint.uri and Path(run.checkpoint.uri).exists() else None
    policy = load_policy(run.policy, checkpoint, env_kind=ENV_KIND)
    prov.extra["policy"] = policy.describe()
    try:
        _episodes(run, tasks, opts, assets, p, policy, on_episode)
    finally:
        policy.close()


def _episodes(
    run: EvalRun,
    tasks: Sequence[RoboTwinTask],
    opts: RoboTwinOptions,
    assets: AssetsRoot,
    p: _Progress,
    policy: Policy,
    on_episode: Callable[[], object],
) -> None:
    from eval_runner.envs.robotwin_env import TaskEnv, build_task_args

    for task in tasks:
        env = TaskEnv(task.name, build_task_args(task.name, assets, opts.task_config, opts.planner), assets)
        walk = SeedWalk(run.seed, run.trials_per_task, env.expert, max_skips=opts.max_skips)
        p.skipped[task.name] = walk.skipped
        for index, seed in enumerate(walk):
            t0 = time.perf_counter()
            outcome = env.episode(seed, index, policy, opts.instruction_type)
            p.env_steps += outcome.steps
            episode = EpisodeResult(
                init_state=index,
                seed=seed,
                success=outcome.success,
                steps=outcome.steps,
                wall_s=round(time.perf_counter() - t0, 3),
            )
            p.episodes.setdefault(task.task_id, []).append(episode)
            log.info("%s episode %d seed %d: %s in %d steps", task.name, index, seed, outcome.success, outcome.steps)
            on_episode()
