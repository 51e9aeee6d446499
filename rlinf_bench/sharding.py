"""Shards of a suite-run: a long run split into Jobs of whole tasks, balanced by horizon x trials.

One eval run (suite x run index) normally is one Job; with ``shards: N`` (or ``auto``) in the request
the planner splits its tasks into N shards, each its own Job writing its own RunResult, and the
aggregator merges them back into the run's RunResult (:mod:`rlinf_aws.shard_results`).

Why a shard's episodes are the unsharded run's: every episode is seeded with the run seed and replays
its task's own chain of reference RNG states from that seed (``eval_runner.scheduler``: the chain is
keyed by (task, seed), and an episode's identity is (task, initial state, seed)). Nothing in it depends
on which other tasks run in the same process, so any partition of whole tasks gives the same episodes.

A run with robustness plays each task's perturbed episodes beside its standard ones, in the same Job (a
perturbed episode's twin is its task's standard episode of the same initial state): they weigh on the task.

Balancing is greedy longest-processing-time (LPT): tasks sorted by weight (horizon x trials, worst case
to the horizon), heaviest first, ties by task id, each given to the shard with the least weight so far
(ties: the lowest shard index). LPT is within 4/3 of the best makespan; for LIBERO, whose tasks of a
suite share one horizon, it deals tasks out like cards and the shards differ by at most one task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from rlinf_bench.contracts.layout import run_result_uri, shard_result_uri
from rlinf_bench.contracts.request import DEFAULT_SHARD_TARGET_S, EvalRequest, EvalRun, SuiteSelection
from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.errors import ConfigError
from rlinf_bench.suites import SuiteSpec, get_suite, resolve_task_ids

__all__ = [
    "DEFAULT_SHARD_TARGET_S",
    "MEASURED_STEPS_PER_S",
    "RunShard",
    "auto_shard_count",
    "balance",
    "expand_shards",
    "shard_count",
    "task_weights",
]

#: Env steps per second of one eval Job, by its worker count. 4-15: bench/results/eval_gpu_h200.json
#: (``harness_steps_per_s``: libero_spatial on one H200, 256 px, both cameras, resets and settle steps
#: included, a policy that costs nothing). 30: the slowest whole suite-run with the 7B stand-in served
#: (bench/results/gpu_suites.json: libero_spatial's 110,000 steps in 245.8 s of rolling time; libero_goal
#: stepped at 495, libero_10 at 540). Other benchmarks are assumed to step at the same rate.
MEASURED_STEPS_PER_S: dict[int, float] = {4: 98.4, 8: 174.9, 15: 258.6, 30: 447.5}


@dataclass(frozen=True)
class RunShard:
    """One Job's part of an eval run: its EvalRun (task subset, own output) and which shard it is."""

    run: EvalRun
    index: int  # 0-based
    count: int
    run_uri: str  # where the merged RunResult of the whole run goes

    @property
    def label(self) -> str:
        """``libero_10 run 0 shard 2/3`` (1-based, as a person counts)."""
        return f"{self.run.suite} run {self.run.run_index} shard {self.index + 1}/{self.count}"


def _task_horizon(spec: SuiteSpec, selection: SuiteSelection, task_id: int) -> int:
    # A task stops at the selection's max steps, else at its own limit in the catalogue; settle steps come first.
    steps = selection.max_steps if selection.max_steps is not None else spec.step_limit(task_id)
    return steps + spec.settle_steps


def task_weights(selection: SuiteSelection, trials: int, robustness: RobustnessSpec | None = None) -> dict[int, int]:
    """Task id -> worst-case env steps of that task in one run (horizon incl. settle steps x its episodes: the
    trials, and the perturbed episodes ``robustness`` adds, which run in the same Job as their twins)."""
    spec = get_suite(selection.name)
    episodes = trials + (robustness.episodes_per_task(trials) if robustness is not None else 0)
    return {t: _task_horizon(spec, selection, t) * episodes for t in resolve_task_ids(spec, selection.tasks)}


def balance(weights: dict[int, int], shards: int) -> list[list[int]]:
    """Greedy LPT: the tasks in ``shards`` groups (each sorted by task id), heaviest task first to the
    lightest group. Fewer groups come back when there are fewer tasks than shards (no empty Job)."""
    if shards < 1:
        raise ConfigError(f"shards: {shards} is not a shard count; give an integer >= 1 or auto")
    count = min(shards, len(weights))
    groups: list[list[int]] = [[] for _ in range(count)]
    loads = [0] * count
    for task in sorted(weights, key=lambda t: (-weights[t], t)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        groups[lightest].append(task)
        loads[lightest] += weights[task]
    return [sorted(g) for g in groups]


def _steps_per_s(workers: int) -> float:
    # The measured rate of the largest worker count not above this one (the smallest measured otherwise).
    known = sorted(MEASURED_STEPS_PER_S)
    below = [w for w in known if w <= workers]
    return MEASURED_STEPS_PER_S[below[-1] if below else known[0]]


def auto_shard_count(weights: dict[int, int], workers: int, target_s: int) -> int:
    """Shards so that each run's worst case (measured steps/s) fits ``target_s``; at most one per task."""
    worst_s = sum(weights.values()) / _steps_per_s(workers)
    return max(1, min(len(weights), math.ceil(worst_s / target_s)))


def _count(request: EvalRequest, weights: dict[int, int]) -> int:
    wanted: int | Literal["auto"] = request.shards
    if wanted == "auto":
        return auto_shard_count(weights, request.workers, request.shard_target_s)
    return min(wanted, len(weights))


def shard_count(request: EvalRequest, selection: SuiteSelection) -> int:
    """How many shards each run of ``selection`` gets under the request's ``shards`` setting."""
    return _count(request, task_weights(selection, request.trials_per_task, request.robustness))


def _split(run: EvalRun, groups: list[list[int]], root: str) -> list[RunShard]:
    """The shards of one eval run, given its suite's task groups (one group: the run itself)."""
    run_uri = run.output_uri or ""
    if len(groups) <= 1:
        return [RunShard(run=run, index=0, count=1, run_uri=run_uri)]
    return [
        RunShard(
            run=run.model_copy(
                update={
                    "task_ids": tasks,
                    "output_uri": shard_result_uri(root, run.suite, run.run_index, i, len(groups)) if root else None,
                }
            ),
            index=i,
            count=len(groups),
            run_uri=run_uri or (run_result_uri(root, run.suite, run.run_index) if root else ""),
        )
        for i, tasks in enumerate(groups)
    ]


def expand_shards(request: EvalRequest, root: str | None = None) -> list[RunShard]:
    """Every Job's share of the eval matrix: :meth:`EvalRequest.expand`, each run split into its shards.

    A suite's task weights and its split are computed once and shared by all its runs (they differ only in
    seed and run index).
    """
    root = request.result_root() if root is None else root
    groups: dict[str, list[list[int]]] = {}
    for selection in request.suites:
        if selection.name in groups:
            continue  # a suite listed twice runs its first listing (as EvalRequest.expand names runs by suite)
        weights = task_weights(selection, request.trials_per_task, request.robustness)
        count = _count(request, weights)
        groups[selection.name] = balance(weights, count) if count > 1 else [sorted(weights)]
    return [s for run in request.expand(root) for s in _split(run, groups[run.suite], root)]
