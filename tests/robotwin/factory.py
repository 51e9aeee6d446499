"""RunResults of RoboTwin suites built from chosen outcomes (for the aggregation and report tests)."""

from __future__ import annotations

from collections.abc import Mapping

from rlinf_bench.contracts import CheckpointRef, EpisodeResult, RunResult, RunStatus, TaskResult
from rlinf_bench.robotwin import SEED_STRIDE, step_limit, suite_tasks

CKPT = CheckpointRef(uri="s3://ckpts/exp/checkpoints/global_step_100", experiment="exp", global_step=100)


def robotwin_run(
    suite: str,
    successes: Mapping[str, int],
    *,
    trials: int = 10,
    run_index: int = 0,
    status: RunStatus = RunStatus.COMPLETE,
) -> RunResult:
    """One run of ``suite``: task ``name`` succeeds in ``successes[name]`` of ``trials`` episodes.

    Tasks of the suite missing from ``successes`` are left out of the result (a run that lacks them).
    """
    tasks = []
    for task_id, name in enumerate(suite_tasks(suite)):
        if name not in successes:
            continue
        first = SEED_STRIDE * (1 + run_index)
        episodes = [
            EpisodeResult(init_state=i, seed=first + i, success=i < successes[name], steps=50, wall_s=1.0)
            for i in range(trials)
        ]
        tasks.append(TaskResult.from_episodes(task_id, name, trials, episodes))
    base = RunResult(
        request_id="exp-s100",
        suite=suite,
        run_index=run_index,
        seed=run_index,
        policy="python:pkg:factory",
        checkpoint=CKPT,
        status=status,
        trials_per_task=trials,
        max_steps=max(step_limit(t) for t in suite_tasks(suite)),
        settle_steps=0,
    )
    return base.with_tasks(tasks)
