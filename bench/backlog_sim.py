"""Simulate evaluation sharing a GPU cluster with training: time to verdict and cost per backlog policy and shard count.

A simpy discrete-event simulation of ``bench/backlog_model.py``'s model. Training slots train runs that save a
checkpoint every S steps; each saved checkpoint goes through the intake's own backlog
(:class:`rlinf_bench.intake.backlog.Backlog`, so held, started and superseded are decided by the code the router
and ``watch --backlog`` run); a started checkpoint submits its shard Jobs, one GPU each; its verdict is the end of
its last Job. Admission is Kueue-like (evaluation borrows idle GPUs, training preempts it) or, for the baseline,
first-come first-served.

Default scenario, issue 28's question: ten training runs checkpointing every 25 steps (120 s/step: 50 min) on a
16-GPU cluster shared with training. Regenerate the committed figures and plots::

    .venv/bin/python bench/backlog_sim.py --out bench/results/backlog_sim.json --plots docs/scale
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
from collections.abc import Callable, Generator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import simpy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.backlog_model import (  # noqa: E402
    SOURCE,
    CheckpointRecord,
    ClusterConfig,
    EvalCost,
    Ledger,
    PolicyConfig,
    TrainingConfig,
    merge,
    summarize,
    to_verdict_quantiles_h,
)
from rlinf_bench.contracts.checkpoint import CheckpointRef  # noqa: E402
from rlinf_bench.intake.backlog import Backlog, MemoryStore, State  # noqa: E402

Proc = Generator[simpy.Event, Any, Any]


@dataclass(eq=False, kw_only=True)
class Request:
    """A Pod-sized ask for GPUs: a training run's or one evaluation Job's."""

    training: bool
    gpus: int
    admitted: simpy.Event
    asked_s: float = 0.0
    proc: simpy.Process | None = None
    waited_on_preemption: bool = False


class Cluster:
    """GPUs, the queue of requests and admission: Kueue-like (:class:`ClusterConfig`) or first-come first-served."""

    def __init__(self, env: simpy.Environment, cfg: ClusterConfig, ledger: Ledger) -> None:
        self.env, self.cfg, self.ledger = env, cfg, ledger
        self.free = cfg.gpus
        self.training_used = 0
        self.stopping = 0  # GPUs of preempted Jobs in their grace period
        self.pending: list[Request] = []
        self.eval_running: list[Request] = []  # admission order: the last is preempted first

    def request(self, req: Request) -> None:
        """Queue ``req`` and admit what fits."""
        req.asked_s = self.env.now
        self.pending.append(req)
        self.schedule()

    def release(self, req: Request, *, stopped: bool = False) -> None:
        """``req``'s GPUs are free again (a Job ended, a preempted Job stopped, a training run finished)."""
        self.free += req.gpus
        if req.training:
            self.training_used -= req.gpus
        elif stopped:
            self.stopping -= req.gpus
        else:
            self.eval_running.remove(req)
        self.schedule()

    def schedule(self) -> None:
        """Admit what can run now; under Kueue, training first, preempting borrowed evaluation GPUs for it."""
        if not self.cfg.kueue:
            for req in list(self.pending):
                if req.gpus <= self.free:
                    self._admit(req)
            return
        reserved = self._schedule_training()
        for req in [r for r in self.pending if not r.training]:
            if self.free - reserved < req.gpus:
                break
            self._admit(req)

    def _schedule_training(self) -> int:
        """Admit or make room for pending training; returns the GPUs kept free for it."""
        coming = self.stopping  # GPUs that free once preempted Jobs stop
        reserved = 0
        for req in [r for r in self.pending if r.training]:
            if self.training_used + reserved + req.gpus > self.cfg.training_quota:
                continue  # over training's own quota: it queues behind training, not behind evaluation
            if req.gpus <= self.free - reserved:
                self._admit(req)
                continue
            short = req.gpus - (self.free - reserved) - coming
            if short > 0:
                coming += self._preempt(short)
            req.waited_on_preemption = req.waited_on_preemption or coming > 0
            coming = max(0, coming - req.gpus)
            reserved += req.gpus
        return reserved

    def _preempt(self, gpus: int) -> int:
        """Evict the most recently admitted evaluation Jobs above evaluation's quota; returns the GPUs freed."""
        borrowed = sum(r.gpus for r in self.eval_running) - self.cfg.eval_quota
        freed = 0
        while freed < gpus and borrowed - freed > 0 and self.eval_running:
            victim = self.eval_running.pop()
            self.stopping += victim.gpus
            freed += victim.gpus
            self.ledger.preemptions += 1
            if victim.proc is not None:
                victim.proc.interrupt("preempted")
        return freed

    def _admit(self, req: Request) -> None:
        self.pending.remove(req)
        self.free -= req.gpus
        waited = self.env.now - req.asked_s
        if req.training:
            self.training_used += req.gpus
            self.ledger.training_wait_gpu_s += waited * req.gpus
            if req.waited_on_preemption:
                self.ledger.training_preempt_wait_gpu_s += waited * req.gpus
        else:
            self.eval_running.append(req)
        req.admitted.succeed()


class Simulation:
    """Checkpoints through the intake's backlog into evaluation Jobs on a :class:`Cluster`."""

    def __init__(self, cluster: ClusterConfig, policy: PolicyConfig, jobs: Sequence[float]) -> None:
        self.env = simpy.Environment()
        self.ledger = Ledger()
        self.cluster = Cluster(self.env, cluster, self.ledger)
        self.jobs = list(jobs)
        self.backlog = Backlog(policy.backlog(), MemoryStore())
        self.records: dict[str, CheckpointRecord] = {}

    def save_at(self, at_s: float, experiment: str, step: int, *, final: bool = False) -> None:
        """A checkpoint of ``experiment`` completes at ``at_s`` (tests place them by hand)."""

        def later() -> Proc:
            yield self.env.timeout(at_s - self.env.now)
            self.save(experiment, step, final=final)

        self.env.process(later())

    def save(self, experiment: str, step: int, *, final: bool = False) -> None:
        """A checkpoint completes now: the backlog starts or holds it."""
        ref = CheckpointRef(uri=f"sim://{experiment}/global_step_{step}", experiment=experiment, global_step=step)
        self.records[ref.uri] = CheckpointRecord(experiment=experiment, step=step, saved_s=self.env.now, final=final)
        self.backlog.admit(ref, self._start)

    def _start(self, ref: CheckpointRef) -> None:
        self.env.process(self._execution(ref))

    def _execution(self, ref: CheckpointRef) -> Proc:
        record = self.records[ref.uri]
        record.started_s = self.env.now
        yield self.env.all_of([self.env.process(self._job(s)) for s in self.jobs])
        record.verdict_s = self.env.now
        self.backlog.finish(ref.uri, self._start)

    def _job(self, seconds: float) -> Proc:
        """One evaluation Job: queued, admitted, run; preempted means its work is lost and it is requeued."""
        while True:
            req = Request(training=False, gpus=1, admitted=self.env.event())
            req.proc = self.env.active_process
            self.cluster.request(req)
            yield req.admitted
            began = self.env.now
            try:
                yield self.env.timeout(seconds)
            except simpy.Interrupt:
                yield self.env.timeout(self.cluster.cfg.preempt_grace_s)
                self.ledger.eval_lost_s += self.env.now - began
                self.cluster.release(req, stopped=True)
                continue
            self.ledger.eval_useful_s += seconds
            self.cluster.release(req)
            return

    def train_at(self, at_s: float, gpus: int, seconds: float, saves: Callable[[], Proc] | None = None) -> None:
        """Training asks for ``gpus`` at ``at_s``, holds them ``seconds`` once admitted, running ``saves`` meanwhile."""
        self.env.process(self._train(at_s, gpus, seconds, saves))

    def _train(self, at_s: float, gpus: int, seconds: float, saves: Callable[[], Proc] | None) -> Proc:
        yield self.env.timeout(at_s - self.env.now)
        yield from self.train(gpus, seconds, saves)

    def train(self, gpus: int, seconds: float, saves: Callable[[], Proc] | None = None) -> Proc:
        """Training now: wait for admission, hold the GPUs ``seconds``, release them."""
        req = Request(training=True, gpus=gpus, admitted=self.env.event())
        self.cluster.request(req)
        yield req.admitted
        if saves is not None:
            self.env.process(saves())
        yield self.env.timeout(seconds)
        self.ledger.training_gpu_s += gpus * seconds
        self.cluster.release(req)

    def training_run(self, experiment: str, cfg: TrainingConfig) -> Proc:
        """One training run: admitted, then a save every ``every_steps`` steps, the last one final."""
        offsets = cfg.save_offsets()

        def saves() -> Proc:
            began = self.env.now
            for i, (step, offset) in enumerate(offsets):
                yield self.env.timeout(began + offset - self.env.now)
                self.save(experiment, step, final=i == len(offsets) - 1)

        yield from self.train(cfg.gpus_per_run, offsets[-1][1], saves)

    def run(self) -> Ledger:
        """Run to the end (every started execution has its verdict) and return the ledger."""
        self.env.run()
        superseded = {e.uri for e in self.backlog.store.entries() if e.state is State.SUPERSEDED}
        for uri, record in self.records.items():
            record.superseded = uri in superseded
        self.ledger.records = list(self.records.values())
        self.ledger.horizon_s = self.env.now
        return self.ledger


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One simulated setting: cluster, training, backlog policy and shards, evaluation cost, horizon, seed."""

    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    job_overhead_s: float = 45.0
    hours: float = 24.0
    seed: int = 0

    def cost(self) -> EvalCost:
        """One checkpoint's Jobs under this scenario's shard count."""
        return EvalCost(shards=self.policy.shards, job_overhead_s=self.job_overhead_s)


def simulate(scenario: Scenario) -> Ledger:
    """Training slots start runs until ``hours``; runs in progress finish; then every execution drains."""
    sim = Simulation(scenario.cluster, scenario.policy, scenario.cost().job_seconds())
    rng = random.Random(scenario.seed)
    cfg = scenario.training
    horizon = scenario.hours * 3600.0

    def slot(i: int) -> Proc:
        yield sim.env.timeout(rng.uniform(0.0, cfg.stagger_s))
        n = 0
        while sim.env.now < horizon:
            yield from sim.training_run(f"run{i:02d}-{n}", cfg)
            n += 1
            yield sim.env.timeout(rng.expovariate(1.0 / cfg.gap_mean_s))

    for i in range(cfg.runs):
        sim.env.process(slot(i))
    return sim.run()


#: (when_free, max_running) compared by default: no backlog limit, and the intake's three policies
POLICIES: tuple[tuple[str, int], ...] = (("all", 0), ("all", 1), ("latest", 1), ("latest", 2), ("every:100", 1))
SHARDS: tuple[int, ...] = (1, 2, 5)


def run_setting(base: Scenario, policy: PolicyConfig, kueue: bool, replications: int) -> dict[str, Any]:
    """One policy and shard count under one admission, over ``replications`` seeds, pooled."""
    cluster = replace(base.cluster, kueue=kueue)
    runs = [simulate(replace(base, cluster=cluster, policy=policy, seed=base.seed + r)) for r in range(replications)]
    pooled = merge(runs)
    return {
        "admission": "kueue" if kueue else "fifo (no Kueue)",
        "when_free": policy.when_free,
        "max_running": policy.max_running,
        "shards": policy.shards,
        "label": policy.label,
        "summary": summarize(pooled, replications=replications),
        "to_verdict_quantiles_h": to_verdict_quantiles_h(pooled, step=2),
    }


def run_grid(base: Scenario, replications: int) -> list[dict[str, Any]]:
    """Every policy x shard count, under Kueue and without it."""
    return [
        run_setting(
            base, PolicyConfig(when_free=when_free, max_running=max_running, shards=shards), kueue, replications
        )
        for kueue in (True, False)
        for when_free, max_running in POLICIES
        for shards in SHARDS
    ]


#: checkpoint intervals for the sensitivity rows: when does evaluating every checkpoint keep up?
SENSITIVITY_EVERY_STEPS: tuple[int, ...] = (25, 50, 100)


def sensitivity(base: Scenario, replications: int) -> list[dict[str, Any]]:
    """No limit and ``latest, max 1`` under Kueue, one shard, as checkpoints come less often."""
    rows = []
    for every in SENSITIVITY_EVERY_STEPS:
        scenario = replace(base, training=replace(base.training, every_steps=every))
        for when_free, max_running in (("all", 0), ("latest", 1)):
            row = run_setting(scenario, PolicyConfig(when_free=when_free, max_running=max_running), True, replications)
            rows.append({"every_steps": every, **{k: v for k, v in row.items() if k != "to_verdict_quantiles_h"}})
    return rows


def idle_cluster(base: Scenario) -> list[dict[str, Any]]:
    """One checkpoint alone on the idle cluster, per shard count: sharding's best case and its price."""
    rows = []
    for shards in SHARDS:
        jobs = EvalCost(shards=shards, job_overhead_s=base.job_overhead_s).job_seconds()
        sim = Simulation(base.cluster, PolicyConfig(shards=shards), jobs)
        sim.save_at(0.0, "alone", 25, final=True)
        ledger = sim.run()
        verdict = ledger.records[0].verdict_s or 0.0
        rows.append({"shards": shards, "jobs": len(jobs), "verdict_s": round(verdict, 1), "gpu_s": round(sum(jobs), 1)})
    return rows


def _git_hash() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def document(base: Scenario, replications: int, rows: list[dict[str, Any]], argv: Sequence[str]) -> dict[str, Any]:
    """The results JSON: the scenario, the measured inputs with their source, provenance, every row."""
    cost = EvalCost(job_overhead_s=base.job_overhead_s)
    return {
        "benchmark": "backlog_sim",
        "question": "ten runs checkpointing every 25 steps on a 16-GPU cluster shared with training: "
        "how long until each verdict, and what does it cost?",
        "command": "python bench/backlog_sim.py " + " ".join(argv),
        "git_hash": _git_hash(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "versions": {"python": sys.version.split()[0], "simpy": simpy.__version__},
        "scenario": {
            "cluster": asdict(base.cluster),
            "training": asdict(base.training),
            "job_overhead_s": base.job_overhead_s,
            "hours": base.hours,
            "seeds": [base.seed + r for r in range(replications)],
        },
        "measured": {
            "source": SOURCE,
            "suite_run_s": {s.name: {"s": s.run_s, "tasks": s.tasks, "source": s.source} for s in cost.suites},
            "runs_per_suite": cost.runs_per_suite,
            "protocol_gpu_s_without_job_overhead": sum(s.run_s for s in cost.suites) * cost.runs_per_suite,
            "checkpoint_gpu_s_by_shards": {str(k): replace(cost, shards=k).gpu_seconds() for k in SHARDS},
        },
        "idle_cluster": idle_cluster(base),
        "sensitivity_every_steps": sensitivity(base, replications),
        "rows": rows,
    }


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line: output paths, seeds and the default scenario's numbers."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("bench/results/backlog_sim.json"))
    p.add_argument("--plots", type=Path, default=None, help="write the PNG plots into this folder (docs/scale)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--replications", type=int, default=5, help="seeds seed..seed+N-1, pooled")
    p.add_argument("--gpus", type=int, default=16)
    p.add_argument("--eval-quota", type=int, default=2, help="evaluation's nominal GPUs in the cohort")
    p.add_argument("--runs", type=int, default=10, help="training runs at once")
    p.add_argument("--every-steps", type=int, default=25)
    p.add_argument("--step-s", type=float, default=120.0)
    p.add_argument("--run-steps", type=int, default=300, help="steps of one training run (its final save)")
    p.add_argument("--hours", type=float, default=24.0, help="training starts new runs for this long")
    return p.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, write the JSON and, with ``--plots``, the PNGs."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    base = Scenario(
        cluster=ClusterConfig(gpus=args.gpus, eval_quota=args.eval_quota),
        training=TrainingConfig(
            runs=args.runs, every_steps=args.every_steps, step_s=args.step_s, run_steps=args.run_steps
        ),
        hours=args.hours,
        seed=args.seed,
    )
    doc = document(base, args.replications, run_grid(base, args.replications), argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}")
    if args.plots is not None:
        from bench.backlog_plots import write_plots

        for path in write_plots(doc, args.plots):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
