"""How long an ``evaluate`` run will take, said before it starts when that is more than a few minutes.

Episodes x steps per episode over a measured stepping rate: LIBERO's simulator on the 2-core dev VM
(bench/results/eval_throughput.json, the rollout phase with resets: 88 env steps/s per worker without a
camera, 8 with one 128 px camera). Every episode is counted to its last step, as a policy that never
succeeds runs it (one that succeeds ends episodes early); a slow policy adds its own time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qs

from eval_runner.episode_settings import resolve_protocol
from rlinf_bench.contracts import EvalRun
from rlinf_bench.robustness import perturbed_episodes
from rlinf_bench.suites import get_suite

__all__ = ["LONG_RUN_S", "RunEstimate", "estimate_run", "long_run_notice"]

#: Env steps/s per worker, resets included (bench/results/eval_throughput.json, "rolling_env_steps_per_s").
STEPS_PER_S_PHYSICS = 88.0
STEPS_PER_S_CAMERA = 8.0
#: Imports, the preflight and the workers' first scene builds, before the first step (same benchmark).
START_S = 30.0
#: Longer than this, ``evaluate`` says so before it starts.
LONG_RUN_S = 600.0
#: The run ``long_run_notice`` offers to try first: one task, two initial states, short episodes.
SHORT_RUN = {"tasks": [0], "trials": 2, "max_steps": 50}
SHORT_RUN_FLAGS = "--tasks 0 --trials 2 --max-steps 50"
DEFAULT_POLICY = "builtin:demo"


@dataclass(frozen=True)
class RunEstimate:
    """A run's size and its expected wall time at the measured rate."""

    tasks: int
    trials: int
    steps_per_episode: int
    workers: int
    steps_per_s: float
    camera: bool
    perturbed: int = 0  # perturbed episodes (robustness) beside the standard ones

    @property
    def episodes(self) -> int:
        return self.tasks * self.trials + self.perturbed

    @property
    def steps(self) -> int:
        return self.episodes * self.steps_per_episode

    @property
    def seconds(self) -> float:
        return START_S + self.steps / (self.steps_per_s * self.workers)


def _renders_a_camera(policy: str) -> bool:
    """Whether the policy spec asks for camera images (``builtin:demo?cameras=...``); a served or Python
    policy's cameras are not known before it loads, so it counts as none (its own time comes on top)."""
    _, _, query = policy.partition("?")
    return bool(parse_qs(query).get("cameras"))


def estimate_run(run: EvalRun, *, cores: int | None = None) -> RunEstimate | None:
    """The estimate for a LIBERO run; None for a suite this install does not know (RoboTwin has no rate here)."""
    try:
        suite = get_suite(run.suite)
    except Exception:  # an unknown suite is refused by the run's own checks, with its did-you-mean
        return None
    if suite.benchmark.trials != "initial_states":  # a seeded benchmark (RoboTwin): no rate measured here
        return None
    protocol = resolve_protocol(run)
    tasks = len(run.task_ids) if run.task_ids else suite.n_tasks
    camera = _renders_a_camera(run.policy)
    # Workers beyond the cores share them: no faster than one per core.
    workers = max(1, min(run.workers, cores or os.cpu_count() or 1))
    return RunEstimate(
        tasks=tasks,
        trials=run.trials_per_task,
        steps_per_episode=protocol.max_steps + protocol.settle_steps,
        workers=workers,
        steps_per_s=STEPS_PER_S_CAMERA if camera else STEPS_PER_S_PHYSICS,
        camera=camera,
        perturbed=perturbed_episodes(run.robustness, tasks, run.trials_per_task),
    )


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def long_run_notice(run: EvalRun, *, cores: int | None = None) -> str | None:
    """Lines for stderr before a run longer than :data:`LONG_RUN_S`: its size, the estimate and its basis,
    and the flags of a short run to try first; None for a shorter run (or one this cannot estimate)."""
    est = estimate_run(run, cores=cores)
    if est is None or est.seconds <= LONG_RUN_S:
        return None
    short = estimate_run(
        run.model_copy(
            update={
                "task_ids": SHORT_RUN["tasks"],
                "trials_per_task": SHORT_RUN["trials"],
                "max_steps": SHORT_RUN["max_steps"],
                "robustness": None,
            }
        ),
        cores=cores,
    )
    rate = f"{est.steps_per_s:.0f} env steps/s per worker measured on a 2-core CPU, " + (
        "one 128 px camera" if est.camera else "no camera"
    )
    lines = [
        f"evaluate: a long run: {est.episodes} episodes ({est.tasks} tasks x {est.trials} trials"
        + (f", + {est.perturbed} perturbed" if est.perturbed else "")
        + f") of up to "
        f"{est.steps_per_episode} steps = {est.steps:,} simulator steps, about {_minutes(est.seconds)} with "
        f"{est.workers} worker(s) ({rate}; a slow policy adds its own time, early successes save some)",
        f"  a short run first: {SHORT_RUN_FLAGS}"
        + (f" (about {_minutes(short.seconds)})" if short is not None else "")
        + "; more workers (--workers, up to the cores) divide the time; Ctrl-C keeps what finished (--resume)",
    ]
    if run.policy == DEFAULT_POLICY:
        lines.append(
            f"  the default policy {DEFAULT_POLICY} is a smoke test that scores about 0 % (docs/policies.md): "
            "--policy names yours"
        )
    return "\n".join(lines)
