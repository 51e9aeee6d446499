"""The model behind ``bench/backlog_sim.py``: what one checkpoint costs, the cluster, training, and the policies.

Pure and typed (dataclasses, no simpy): the simulation turns these into events, the tests and the plots read
them directly.

Measured inputs (bench/results/gpu_suites.json, written by bench/gpu_suites.py): one suite-run of 500 episodes,
every episode to the suite's OpenVLA-OFT horizon, 7B stand-in served, one GPU, for each of LIBERO's four suites.
The model takes each suite's slowest measured run, so its backlog is an upper bound. The model server's start is
not in those wall times: it is part of :attr:`EvalCost.job_overhead_s`.

Backlog policies are the intake's own (:func:`rlinf_bench.intake.backlog.choose`): the simulation calls that
function, so ``all``, ``latest`` and ``every:K`` here are exactly what ``watch --backlog`` and the router do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rlinf_bench.intake.backlog import BacklogPolicy

GPU_SUITES = Path(__file__).resolve().parent / "results" / "gpu_suites.json"
#: where the per-suite figures come from (cited in the results JSON)
SOURCE = "bench/results/gpu_suites.json: each suite's slowest measured suite-run (wall_s), with its card and lease"
#: start-up, first wave and tail inside one suite-run process: wall time less env steps at the steady rate, 43 s
#: on LIBERO-Spatial (298 s - 110,000 steps / 432 steps/s) and 51-63 s on the other suites (gpu_suites.json)
RUN_FIXED_S = 43.0


@dataclass(frozen=True, kw_only=True)
class Suite:
    """One LIBERO suite as the planner sees it: its tasks and one suite-run's wall time on one GPU."""

    name: str
    tasks: int
    run_s: float  # one suite-run of 500 episodes to the horizon, one H200
    source: str

    def __post_init__(self) -> None:
        if self.tasks < 1 or self.run_s <= RUN_FIXED_S:
            raise ValueError(f"suite {self.name}: need tasks >= 1 and run_s > {RUN_FIXED_S} s")


def measured_suites(path: Path = GPU_SUITES) -> tuple[Suite, ...]:
    """LIBERO's four suites at their slowest measured suite-run on one GPU (bench/results/gpu_suites.json)."""
    doc = json.loads(path.read_text())
    out = []
    for name in ("libero_spatial", "libero_object", "libero_goal", "libero_10"):
        entry = doc["suites"][name]
        walls = " / ".join(f"{w:.1f}" for w in entry["wall_s"])
        source = f"measured, {walls} s on {entry['card']} ({entry['lease']})"
        out.append(Suite(name=name, tasks=10, run_s=max(entry["wall_s"]), source=source))
    return tuple(out)


MEASURED_SUITES: tuple[Suite, ...] = measured_suites()


def split_tasks(tasks: int, shards: int) -> list[int]:
    """Whole tasks per shard, balanced (sizes differ by one at most), largest first; never more shards than tasks."""
    if shards < 1:
        raise ValueError(f"shards {shards}: give 1 or more")
    k = min(shards, tasks)
    base, extra = divmod(tasks, k)
    return [base + 1] * extra + [base] * (k - extra)


@dataclass(frozen=True, kw_only=True)
class EvalCost:
    """What a checkpoint's evaluation costs: its suite-runs, split into shard Jobs of one GPU each."""

    suites: tuple[Suite, ...] = MEASURED_SUITES
    runs_per_suite: int = 3
    shards: int = 1
    #: per Job: Pod scheduling and container start (assumed ~30 s) + the model server's start (8-24 s measured)
    job_overhead_s: float = 45.0

    def shard_seconds(self, suite: Suite) -> list[float]:
        """Each shard Job of one suite-run: overhead + fixed part + its share of the stepping time."""
        stepping = suite.run_s - RUN_FIXED_S
        return [
            self.job_overhead_s + RUN_FIXED_S + stepping * n / suite.tasks
            for n in split_tasks(suite.tasks, self.shards)
        ]

    def job_seconds(self) -> list[float]:
        """Every Job of one checkpoint, longest first (the order the planner submits them)."""
        jobs = [s for suite in self.suites for _ in range(self.runs_per_suite) for s in self.shard_seconds(suite)]
        return sorted(jobs, reverse=True)

    def gpu_seconds(self) -> float:
        """GPU time of one checkpoint's evaluation when nothing is preempted."""
        return sum(self.job_seconds())


@dataclass(frozen=True, kw_only=True)
class ClusterConfig:
    """G GPUs shared by training and evaluation.

    ``kueue=True``: two ClusterQueues in one cohort (deploy/k8s/kueue/). Evaluation owns ``eval_quota`` GPUs
    and borrows any idle GPU of the cohort; training owns the rest and reclaims what evaluation borrowed by
    preempting its most recently admitted Jobs (each gets ``preempt_grace_s`` to stop; its work is lost and the
    Job is requeued). ``kueue=False``: the no-Kueue baseline, one first-come first-served queue of Pods: an
    evaluation Job that got a GPU keeps it, training waits for GPUs like anyone else.
    """

    gpus: int = 16
    eval_quota: int = 2  # deploy/k8s/kueue's ratio: 8 of 64 GPUs nominal for evaluation
    preempt_grace_s: float = 30.0  # the Pod's terminationGracePeriodSeconds (Kubernetes' default)
    kueue: bool = True

    def __post_init__(self) -> None:
        if self.gpus < 1 or not 0 <= self.eval_quota <= self.gpus:
            raise ValueError(f"cluster: need gpus >= 1 and 0 <= eval_quota <= gpus, got {self.gpus}, {self.eval_quota}")

    @property
    def training_quota(self) -> int:
        """Training's nominal GPUs: the rest of the cluster."""
        return self.gpus - self.eval_quota


@dataclass(frozen=True, kw_only=True)
class TrainingConfig:
    """T training slots; each trains a run of ``run_steps`` steps, saves every ``every_steps``, then starts another.

    A slot's first run starts at a random time in ``[0, stagger_s)``; after a run ends the slot's next run
    starts after an exponential gap (mean ``gap_mean_s``), until ``hours``. A run holds ``gpus_per_run`` GPUs from
    admission to its final save; a run that waits for GPUs saves later (its checkpoints follow its start).
    """

    runs: int = 10
    every_steps: int = 25
    step_s: float = 120.0
    run_steps: int = 300  # 10 h at 120 s/step: the CLI default
    gpus_per_run: int = 1
    stagger_s: float = 3600.0
    gap_mean_s: float = 1800.0

    def __post_init__(self) -> None:
        if self.every_steps < 1 or self.run_steps < self.every_steps or self.step_s <= 0:
            raise ValueError("training: need every_steps >= 1, run_steps >= every_steps, step_s > 0")

    def save_offsets(self) -> list[tuple[int, float]]:
        """(global step, seconds after the run's start) of each save; the last is the final checkpoint."""
        steps = list(range(self.every_steps, self.run_steps + 1, self.every_steps))
        if steps[-1] != self.run_steps:
            steps.append(self.run_steps)
        return [(s, s * self.step_s) for s in steps]


@dataclass(frozen=True, kw_only=True)
class PolicyConfig:
    """A backlog setting of the intake (``backlog: {max_running, when_free}``) and the request's ``shards``."""

    when_free: str = "all"
    max_running: int = 0  # 0: no limit, nothing held
    shards: int = 1

    def __post_init__(self) -> None:
        BacklogPolicy(max_running=self.max_running, when_free=self.when_free)  # the intake's own validation

    @property
    def label(self) -> str:
        """How the plots and the JSON name this setting."""
        held = "no limit" if self.max_running == 0 else f"{self.when_free}, max {self.max_running}"
        return f"{held}, {self.shards} shard{'s' if self.shards > 1 else ''}"

    def backlog(self) -> BacklogPolicy:
        """The intake's policy object for this setting."""
        return BacklogPolicy(max_running=self.max_running, when_free=self.when_free)


@dataclass(kw_only=True)
class CheckpointRecord:
    """One saved checkpoint and what became of it (times in simulated seconds)."""

    experiment: str
    step: int
    saved_s: float
    final: bool
    started_s: float | None = None
    verdict_s: float | None = None
    superseded: bool = False

    @property
    def to_verdict_s(self) -> float | None:
        """Seconds from save to verdict; None when it never got one."""
        return None if self.verdict_s is None else self.verdict_s - self.saved_s


@dataclass(kw_only=True)
class Ledger:
    """GPU time by purpose, summed over the simulation (seconds)."""

    eval_useful_s: float = 0.0  # Jobs that ran to the end
    eval_lost_s: float = 0.0  # work of preempted Jobs, thrown away (their grace period included)
    training_wait_gpu_s: float = 0.0  # GPUs training asked for and did not get, times how long
    training_preempt_wait_gpu_s: float = 0.0  # the part of that spent waiting for preempted Jobs to stop
    preemptions: int = 0
    training_gpu_s: float = 0.0
    horizon_s: float = 0.0
    records: list[CheckpointRecord] = field(default_factory=list)


def merge(ledgers: Sequence[Ledger]) -> Ledger:
    """Replications pooled: records concatenated, GPU time summed (summarize divides by the count)."""
    out = Ledger()
    for one in ledgers:
        for name in ("eval_useful_s", "eval_lost_s", "training_wait_gpu_s", "training_preempt_wait_gpu_s"):
            setattr(out, name, getattr(out, name) + getattr(one, name))
        out.preemptions += one.preemptions
        out.training_gpu_s += one.training_gpu_s
        out.horizon_s = max(out.horizon_s, one.horizon_s)
        out.records.extend(one.records)
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolation percentile (numpy's default), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _hours(value: float | None) -> float | None:
    return None if value is None else round(value / 3600.0, 3)


def to_verdict_quantiles_h(ledger: Ledger, step: int = 5) -> list[float | None]:
    """Time to verdict (hours) at percentiles 0, step, ..., 100: the CDF the plots draw."""
    waits = [r.to_verdict_s for r in ledger.records if r.to_verdict_s is not None]
    return [_hours(percentile(waits, q)) for q in range(0, 101, step)]


def summarize(ledger: Ledger, replications: int = 1) -> dict[str, float | int | None]:
    """The figures one simulated setting is judged by (hours, fractions, GPU-hours).

    ``ledger`` may pool several replications: percentiles and ratios use every record, counts and GPU-hours
    are means per replication.
    """
    recs, n = ledger.records, max(1, replications)
    waits = [r.to_verdict_s for r in recs if r.to_verdict_s is not None]
    finals = [r.to_verdict_s for r in recs if r.final and r.to_verdict_s is not None]
    eval_gpu_s = ledger.eval_useful_s + ledger.eval_lost_s

    def mean_h(seconds: float) -> float:
        return round(seconds / 3600.0 / n, 3)

    return {
        "checkpoints": round(len(recs) / n, 2),
        "verdicts": round(len(waits) / n, 2),
        "superseded": round(sum(r.superseded for r in recs) / n, 2),
        "pending_at_end": sum(1 for r in recs if r.verdict_s is None and not r.superseded),
        "fraction_evaluated": round(len(waits) / len(recs), 4) if recs else None,
        "to_verdict_p50_h": _hours(percentile(waits, 50)),
        "to_verdict_p95_h": _hours(percentile(waits, 95)),
        "to_verdict_max_h": _hours(max(waits) if waits else None),
        "final_checkpoints": round(sum(r.final for r in recs) / n, 2),
        "final_to_verdict_p50_h": _hours(percentile(finals, 50)),
        "final_to_verdict_p95_h": _hours(percentile(finals, 95)),
        "final_to_verdict_max_h": _hours(max(finals) if finals else None),
        "eval_gpu_h": mean_h(eval_gpu_s),
        "eval_lost_gpu_h": mean_h(ledger.eval_lost_s),
        "gpu_h_per_verdict": round(eval_gpu_s / 3600.0 / len(waits), 3) if waits else None,
        "training_lost_gpu_h": mean_h(ledger.training_wait_gpu_s),
        "training_lost_to_preemption_gpu_h": mean_h(ledger.training_preempt_wait_gpu_s),
        "training_gpu_h": mean_h(ledger.training_gpu_s),
        "training_lost_fraction": round(ledger.training_wait_gpu_s / ledger.training_gpu_s, 4)
        if ledger.training_gpu_s
        else None,
        "preemptions": round(ledger.preemptions / n, 2),
        "simulated_h": _hours(ledger.horizon_s),
    }
