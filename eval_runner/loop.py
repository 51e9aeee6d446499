"""One evaluation run, in-process, for every env kind: set up, load the policy, roll out, write the RunResult.

The env kind (:mod:`eval_runner.envs.kinds`, picked by the suite) gives the tasks, their step limits, how
episodes are seeded and the scenes the workers build; everything else is this loop's, for LIBERO and
RoboTwin alike: worker processes, the scheduler, batched policy calls, resume, videos and the result.

The result file exists from the first second and is rewritten after every episode, so whatever stops
the run (bad input, a crash loop, SIGTERM, a killed pod) leaves the finished episodes and the reason:

- ``complete``: every scheduled episode finished;
- ``incomplete``: interrupted (or still running); the episodes present are real;
- ``failed``: the run could not go on (bad input, unreadable checkpoint, a worker crash loop, a policy
  error); ``error`` says why and how to fix it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from eval_runner.envs.kinds import EnvKind, EnvOptions, EnvRun, SceneMaker, kind_for_suite
from eval_runner.perturbations.draw import AxisLevel
from eval_runner.policies.base import Policy
from eval_runner.progress import Progress
from eval_runner.result_writer import ResultWriter
from eval_runner.rollout import Rollout
from eval_runner.rollout_videos import RolloutVideos
from eval_runner.run_result import ResultBuilder, provenance_with_policy
from eval_runner.scheduler import Scheduler, plan_episodes
from eval_runner.settings import EvalSettings
from eval_runner.vector import WorkerConfig, WorkerHandle, close_all
from rlinf_bench.contracts import EpisodeResult, EvalRun, Provenance, RunResult, RunStatus
from rlinf_bench.contracts.layout import result_root, run_result_uri
from rlinf_bench.errors import ConfigError, PolicyServerUnreachableError, RlinfBenchError
from rlinf_bench.provenance import collect_provenance, cpu_count
from rlinf_bench.robustness import perturbed_episodes
from rlinf_doctor.nvml_gpus import NvmlGpus

log = logging.getLogger(__name__)

__all__ = ["default_output", "evaluate"]


def default_output(run: EvalRun) -> str:
    """``results/<request_id>/<suite>/run<k>.json`` under the working directory."""
    return run_result_uri(result_root("results", run.request_id or "local"), run.suite, run.run_index)


def evaluate(
    run: EvalRun,
    *,
    out_path: str | Path | None = None,
    policy: Policy | None = None,
    settings: EvalSettings | None = None,
    env_options: EnvOptions | None = None,
    s3_client: Any = None,
    command: Sequence[str] | None = None,
    on_episode: Callable[[RunResult], None] | None = None,
    provenance: Provenance | None = None,
) -> RunResult:
    """Evaluate ``run`` and return its complete RunResult (also written to ``out_path``).

    ``env_options`` are the env kind's own (RoboTwin's assets, planner…; default: the kind's defaults).
    ``policy`` overrides ``run.policy`` (tests and in-process pipelines); otherwise the policy spec is
    loaded with the run's checkpoint, fetched from S3 when needed. ``on_episode`` is called with the
    partial result after every finished episode (e.g. to send a workflow heartbeat). ``provenance`` is
    the run's, collected once by the caller (collected here when not given). On failure or interruption
    the result file is written with status failed/incomplete and the error is re-raised.
    """
    settings = settings or EvalSettings()
    kind = kind_for_suite(run.suite)
    writer = ResultWriter(
        str(out_path or run.output_uri or default_output(run)),
        s3_client=s3_client,
        min_interval_s=settings.s3_write_interval_s,
    )
    previous = writer.read_existing() if settings.resume else None
    if previous is not None:  # checked before anything is written: a mismatch leaves the other run's file as it is
        check_resumable(previous, _identity(run), writer.out)
    # Until the run is set up, a failure is reported with what we know: the request and the provenance.
    builder = ResultBuilder(
        run,
        [],
        run.max_steps or 1,
        settings.settle_steps or 0,
        provenance or collect_provenance(gpus=NvmlGpus(), command=command),
    )
    with _final_state_written(writer, builder, previous):
        env = _set_up(kind, run, env_options, settings, builder)
    if previous is not None:
        check_resumable(previous, _shape(env), writer.out)
        if previous.status is RunStatus.COMPLETE:
            log.info("resume: %s is already complete; nothing to run", writer.out)
            return previous
    # Whatever stops the run is written first; then the progress bar and a policy loaded here are closed.
    with contextlib.ExitStack() as cleanup, _final_state_written(writer, builder, previous):
        policy, scenes = _ready(run, env, kind, builder, writer, previous, policy, settings, s3_client, cleanup)
        progress = Progress(
            run.trials_per_task * len(builder.tasks)
            + perturbed_episodes(run.robustness, len(builder.tasks), run.trials_per_task),
            desc=f"{run.suite} run{run.run_index}",
            enabled=settings.progress,
            initial_done=builder.finished,
            initial_successes=builder.successes,
            initial_uncounted=builder.finished_all - builder.finished,
        )
        cleanup.callback(progress.close)
        _rollout(run, env, scenes, builder, writer, settings, policy, progress, on_episode)
    result = builder.build(RunStatus.COMPLETE)
    writer.write(result, final=True)
    log.info(
        "run complete suite=%s run_index=%d success_rate=%.3f episodes=%d out=%s",
        run.suite,
        run.run_index,
        result.success_rate,
        result.episodes,
        writer.out,
    )
    return result


def _set_up(
    kind: EnvKind, run: EvalRun, options: EnvOptions | None, settings: EvalSettings, builder: ResultBuilder
) -> EnvRun:
    """The run's environment; the builder takes its tasks, limits and protocol (a failure has them from here)."""
    if run.robustness is not None and not kind.perturbable:
        raise ConfigError(
            f"robustness: suite {run.suite} runs on {kind.name}, whose scenes have no robustness axes here (LIBERO "
            "suites have them): run it without --robustness"
        )
    env = kind.setup(run, options or kind.options(), settings)
    builder.tasks = list(env.tasks)
    builder.max_steps = env.max_steps
    builder.settle_steps = env.settle_steps
    builder.protocol = env.protocol
    return env


def _ready(
    run: EvalRun,
    env: EnvRun,
    kind: EnvKind,
    builder: ResultBuilder,
    writer: ResultWriter,
    previous: RunResult | None,
    policy: Policy | None,
    settings: EvalSettings,
    s3_client: Any,
    cleanup: contextlib.ExitStack,
) -> tuple[Policy, SceneMaker]:
    """The earlier attempt's episodes kept, the machine ready, the policy loaded (``policy``, else the run's,
    closed by ``cleanup``) and the workers' scenes for it."""
    if previous is not None:
        _preload(builder, previous)
        env.resumed_from(previous)
    builder.provenance = env.prepare(builder.provenance)
    writer.write(builder.build(RunStatus.INCOMPLETE, "setting up"), final=True)
    if policy is None:
        policy = _load_policy(run, settings, s3_client, kind)
        cleanup.callback(policy.close)
    try:
        scenes = env.scenes(policy)
    finally:
        builder.protocol = env.protocol  # completed with the policy's resolution and decoding
    builder.provenance = provenance_with_policy(builder.provenance, policy.describe())
    return policy, scenes


def _identity(run: EvalRun) -> dict[str, Any]:
    return {
        "suite": run.suite,
        "run_index": run.run_index,
        "seed": run.seed,
        "policy": run.policy,
        "trials_per_task": run.trials_per_task,
        "checkpoint": run.checkpoint.uri or None,
        "robustness": run.robustness,
    }


def _shape(env: EnvRun) -> dict[str, Any]:
    return {"max_steps": env.max_steps, "settle_steps": env.settle_steps, "tasks": [t.task_id for t in env.tasks]}


def check_resumable(previous: RunResult, expected: dict[str, Any], out: str) -> None:
    """Refuse to resume from a result of a different run (mixing them would corrupt the statistics)."""
    found = {
        "suite": previous.suite,
        "run_index": previous.run_index,
        "seed": previous.seed,
        "policy": previous.policy,
        "trials_per_task": previous.trials_per_task,
        "max_steps": previous.max_steps,
        "settle_steps": previous.settle_steps,
        "checkpoint": previous.checkpoint.uri if previous.checkpoint else None,
        "tasks": [t.task_id for t in previous.tasks],
        "robustness": previous.protocol.robustness if previous.protocol else None,
    }
    diff = [f"{k}: file has {found[k]!r}, this run {v!r}" for k, v in expected.items() if found[k] != v]
    if diff:
        raise ConfigError(
            f"cannot resume from {out}: it belongs to a different run ({'; '.join(diff)}); "
            "write to another --out, or delete the file to start over"
        )


def _preload(builder: ResultBuilder, previous: RunResult) -> None:
    for task in previous.tasks:
        for episode in [*task.episodes, *task.perturbed]:
            builder.add(task.task_id, episode)
    builder.provenance.extra["resumed"] = {
        "episodes": builder.finished_all,
        "previous_status": previous.status.value,
        "previous_started_at": previous.timings.started_at,
        "previous_error": previous.error,
    }
    log.info("resume: %d finished episodes kept from the previous attempt", builder.finished_all)


def _load_policy(run: EvalRun, settings: EvalSettings, s3_client: Any, kind: EnvKind) -> Policy:
    from eval_runner.checkpoint_fetch import materialize_checkpoint
    from eval_runner.libero_setup import default_cache_dir
    from eval_runner.policies.factory import load_policy
    from rlinf_aws.s3_objects import S3Objects

    checkpoint_dir = None
    if run.checkpoint.uri:
        cache = (settings.cache_dir or default_cache_dir()) / "checkpoints"
        # The layout the intake found rides in the run; only the files it needs are checked again.
        checkpoint_dir = materialize_checkpoint(
            run.checkpoint.uri, cache, layout=run.checkpoint.layout, objects=S3Objects(s3_client)
        )
    return load_policy(run.policy, checkpoint_dir, env_kind=kind.name)


def _rollout(
    run: EvalRun,
    env: EnvRun,
    scenes: SceneMaker,
    builder: ResultBuilder,
    writer: ResultWriter,
    settings: EvalSettings,
    policy: Policy,
    progress: Progress,
    on_episode: Callable[[RunResult], None] | None,
) -> None:
    task_ids = [t.task_id for t in builder.tasks]
    done = {
        _key(task_id, e) for kept in (builder.episodes, builder.perturbed) for task_id, eps in kept.items() for e in eps
    }
    planned = plan_episodes(run.suite, run.seed, task_ids, run.trials_per_task, run.robustness)
    plan = [e for e in planned if e.key not in done]
    if not plan:
        return
    n_workers = max(1, min(run.workers, len(plan)))
    config = WorkerConfig(
        scenes=scenes,
        fault=settings.fault_injection,
        log_level=logging.getLogger().getEffectiveLevel(),
        # each worker gets its share of the cores (rendering on a CPU is multi-threaded in Mesa)
        threads=settings.worker_threads or max(1, cpu_count() // n_workers),
    )
    log.info(
        "evaluating suite=%s tasks=%s trials=%d max_steps=%d settle_steps=%d workers=%d policy=%s cameras=%s",
        run.suite,
        task_ids,
        run.trials_per_task,
        builder.max_steps,
        builder.settle_steps,
        n_workers,
        run.policy,
        list(policy.obs_spec.cameras) or "none (physics only)",
    )
    videos = RolloutVideos(run.videos, _video_dir(writer, settings), writer, builder) if run.videos else None
    workers: list[WorkerHandle] = []
    try:
        # Workers beyond the cores start once the first wave's scenes are up (Rollout._start_next_wave).
        first_wave = min(n_workers, max(1, cpu_count()))
        workers = [WorkerHandle(i, config, settings.start_method, start=i < first_wave) for i in range(n_workers)]
        Rollout(
            policy=policy,
            scheduler=Scheduler(plan, first_state=env.first_start, known=env.known_starts()),
            workers=workers,
            builder=builder,
            writer=writer,
            settings=settings,
            progress=progress,
            task_language={t.task_id: t.language for t in builder.tasks},
            videos=videos,
            on_episode=on_episode,
            env=env,
        ).run()
    finally:
        close_all(workers)
        builder.provenance.extra["workers"] = n_workers
        builder.provenance.extra["worker_restarts"] = builder.counters.worker_restarts
        builder.provenance.extra["throughput"] = builder.counters.throughput()


def _key(task_id: int, episode: EpisodeResult) -> tuple[int, int, str]:
    """A finished episode's :attr:`EpisodeTask.key`."""
    p = episode.perturbation
    return (task_id, episode.init_state, AxisLevel(p.axis, p.level).tag if p is not None else "")


def _video_dir(writer: ResultWriter, settings: EvalSettings) -> Path:
    if writer.is_s3:
        from eval_runner.libero_setup import default_cache_dir

        return (settings.cache_dir or default_cache_dir()) / "videos" / writer.key.replace("/", "_")
    return writer.path.parent / f"{writer.path.stem}.videos"


@contextlib.contextmanager
def _final_state_written(writer: ResultWriter, builder: ResultBuilder, previous: RunResult | None) -> Iterator[None]:
    """Whatever stops the run in the block is written as its final state (then re-raised)."""
    try:
        yield
    except KeyboardInterrupt:
        _final_write(
            writer, builder, previous, RunStatus.INCOMPLETE, "interrupted (SIGINT/SIGTERM); re-run to complete it"
        )
        raise
    except PolicyServerUnreachableError as exc:
        # The episodes so far are sound; only the policy went away. Keep them so --resume finishes the run.
        message = f"{type(exc).__name__}: {exc}; the finished episodes are kept: re-run with --resume"
        _final_write(writer, builder, previous, RunStatus.INCOMPLETE, message)
        raise
    except RlinfBenchError as exc:
        _final_write(writer, builder, previous, RunStatus.FAILED, f"{type(exc).__name__}: {exc}")
        raise
    except Exception as exc:
        _final_write(writer, builder, previous, RunStatus.FAILED, f"internal error {type(exc).__name__}: {exc}")
        raise


def _final_write(
    writer: ResultWriter, builder: ResultBuilder, previous: RunResult | None, status: RunStatus, error: str
) -> None:
    """Write the final state; if even that fails, say so on stderr (the original error still propagates).

    A run that fails before it was set up must not wipe the episodes of the attempt it was resuming.
    """
    if builder.tasks or previous is None:
        final = builder.build(status, error)
    else:
        final = previous.model_copy(update={"status": status, "error": error})
    try:
        writer.write(final, final=True)
    except Exception as exc:  # never mask the original error with a write error
        print(f"eval_runner: could not write the {status.value} result to {writer.out}: {exc}", file=sys.stderr)
    # The CLI prints the error once, with the result file (eval_runner.cli); a second copy here doubled it.
    log.debug("run %s: %s (result: %s)", status.value, error, writer.out)
