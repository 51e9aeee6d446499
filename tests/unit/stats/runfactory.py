"""Build valid RunResults from outcome tables, for aggregation, publishing and report tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rlinf_bench.contracts import CheckpointRef, EpisodeResult, RunResult, RunStatus, TaskResult, request_id_for
from rlinf_bench.protocols import PROFILES, RunProtocol

CKPT = CheckpointRef(uri="s3://bucket/exp/checkpoints/global_step_100", experiment="exp", global_step=100)


def checkpoint(step: int, experiment: str = "exp") -> CheckpointRef:
    return CheckpointRef(
        uri=f"s3://bucket/{experiment}/checkpoints/global_step_{step}", experiment=experiment, global_step=step
    )


def make_run(
    outcomes: Mapping[int, Sequence[bool | int]],
    *,
    suite: str = "libero_spatial",
    run_index: int = 0,
    status: RunStatus = RunStatus.COMPLETE,
    ckpt: CheckpointRef | None = CKPT,
    policy: str = "builtin:demo",
    task_names: Mapping[int, str] | None = None,
    error: str | None = None,
    trials: int | None = None,
    protocol: str = "rlinf",
) -> RunResult:
    """One run: ``outcomes[task_id][init_state]`` is the episode's success.

    Runs follow ``protocol``'s episode settings and decoding; the default (rlinf) makes them comparable
    with the paper baselines in rlinf_bench/data/baselines/libero*.yaml.
    """
    tasks = []
    if trials is None:
        trials = max(len(v) for v in outcomes.values()) if outcomes else 1
    for task_id, succ in sorted(outcomes.items()):
        eps = [
            EpisodeResult(init_state=i, seed=run_index, success=bool(s), steps=10, wall_s=0.1)
            for i, s in enumerate(succ)
        ]
        name = (task_names or {}).get(task_id, f"task_{task_id}")
        tasks.append(TaskResult.from_episodes(task_id, name, trials, eps))
    base = RunResult(
        request_id=request_id_for(ckpt) if ckpt else "req",
        suite=suite,
        run_index=run_index,
        seed=run_index,
        policy=policy,
        checkpoint=ckpt,
        status=status,
        error=error,
        trials_per_task=trials,
        max_steps=_protocol(protocol, suite).max_steps,
        settle_steps=_protocol(protocol, suite).settle_steps,
        protocol=_protocol(protocol, suite),
    )
    return base.with_tasks(tasks)


def _protocol(name: str, suite: str) -> RunProtocol:
    profile = PROFILES[name]
    return RunProtocol(
        name=name,
        max_steps=profile.max_steps.get(suite, 220),
        settle_steps=profile.settle_steps,
        settle_gripper=profile.settle_gripper,
        decoding=profile.decoding,
        rng_scheme="reference-replay-v2",
    )


def heterogeneous_runs(
    rng: np.random.Generator,
    state_rates: np.ndarray,
    *,
    runs: int = 3,
    suite: str = "libero_spatial",
    ckpt: CheckpointRef | None = CKPT,
) -> list[RunResult]:
    """``state_rates`` is (tasks x states): each run draws every episode from its state's own rate."""
    out = []
    for r in range(runs):
        draws = rng.random(state_rates.shape) < state_rates
        out.append(make_run({t: list(row) for t, row in enumerate(draws)}, suite=suite, run_index=r, ckpt=ckpt))
    return out
