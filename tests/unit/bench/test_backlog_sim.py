"""The backlog simulation (bench/backlog_sim.py) against cases computed by hand, and the model's arithmetic.

Every expected time below is worked out in the comment above it; equality is exact (the durations are exact
binary fractions or integers, so no float tolerance is needed).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.backlog_model import ClusterConfig, EvalCost, PolicyConfig, TrainingConfig, split_tasks, summarize
from bench.backlog_sim import Scenario, Simulation, idle_cluster, main, simulate


def _sim(gpus: int, policy: PolicyConfig, jobs: list[float], *, kueue: bool = True, quota: int = 0) -> Simulation:
    return Simulation(ClusterConfig(gpus=gpus, eval_quota=quota, kueue=kueue), policy, jobs)


def _by_step(sim: Simulation) -> dict[int, tuple[float | None, float | None, bool]]:
    ledger = sim.run()
    return {r.step: (r.started_s, r.verdict_s, r.superseded) for r in ledger.records}


def test_one_gpu_three_checkpoints_queue_one_behind_the_other() -> None:
    # GIVEN one GPU, no backlog limit, saves at 0/60/120 s, each evaluation one 180 s Job
    sim = _sim(1, PolicyConfig(), [180.0], quota=1)
    for at, step in ((0.0, 25), (60.0, 50), (120.0, 75)):
        sim.save_at(at, "exp", step, final=step == 75)
    # WHEN it runs: each execution starts at its save (no limit); its Job waits for the GPU: 0-180, 180-360, 360-540
    got = _by_step(sim)
    # THEN verdicts at 180/360/540 s: 180, 300 and 420 s after their saves
    assert got == {25: (0.0, 180.0, False), 50: (60.0, 360.0, False), 75: (120.0, 540.0, False)}
    assert [r.to_verdict_s for r in sim.ledger.records] == [180.0, 300.0, 420.0]
    assert sim.ledger.eval_useful_s == 540.0 and sim.ledger.eval_lost_s == 0.0


def test_latest_supersedes_the_held_ones_and_starts_the_final() -> None:
    # GIVEN latest, max 1: 25 starts at 0; 50 (60 s) and 75 (120 s) are held
    sim = _sim(1, PolicyConfig(when_free="latest", max_running=1), [180.0], quota=1)
    for at, step in ((0.0, 25), (60.0, 50), (120.0, 75)):
        sim.save_at(at, "exp", step, final=step == 75)
    # WHEN 25 ends at 180: the newest held (75, final) starts and ends at 360; 50 is superseded
    got = _by_step(sim)
    assert got == {25: (0.0, 180.0, False), 50: (None, None, True), 75: (180.0, 360.0, False)}
    summary = summarize(sim.ledger)
    assert summary["fraction_evaluated"] == round(2 / 3, 4)
    assert summary["final_to_verdict_max_h"] == round(240.0 / 3600.0, 3)


def test_all_with_max_running_one_runs_them_one_at_a_time_even_with_two_gpus() -> None:
    # Without the limit, two GPUs would give verdicts at 180, 240, 360; max 1 serialises: 180, 360, 540
    sim = _sim(2, PolicyConfig(when_free="all", max_running=1), [180.0], quota=2)
    for at, step in ((0.0, 25), (60.0, 50), (120.0, 75)):
        sim.save_at(at, "exp", step)
    assert _by_step(sim) == {25: (0.0, 180.0, False), 50: (180.0, 360.0, False), 75: (360.0, 540.0, False)}


def test_every_k_keeps_multiples_of_k_and_the_final() -> None:
    # GIVEN every:100, max 1: 25 runs 0-180; 50..150 (150 final) saved at 10..50 s are held
    sim = _sim(1, PolicyConfig(when_free="every:100", max_running=1), [180.0], quota=1)
    sim.save_at(0.0, "exp", 25)
    for i, step in enumerate((50, 75, 100, 125, 150)):
        sim.save_at(10.0 * (i + 1), "exp", step, final=step == 150)
    got = _by_step(sim)
    # THEN at 180 the kept ones are 100 and 150 (the newest); 100 runs 180-360, then 150 runs 360-540
    assert {s for s, (_, _, sup) in got.items() if sup} == {50, 75, 125}
    assert got[100] == (180.0, 360.0, False) and got[150] == (360.0, 540.0, False)


def test_preempted_job_is_requeued_and_restarts() -> None:
    # GIVEN 2 GPUs, evaluation's quota 0 (all it holds is borrowed), a checkpoint of two 180 s Jobs at 0 s
    sim = _sim(2, PolicyConfig(), [180.0, 180.0])
    sim.save_at(0.0, "exp", 25, final=True)
    # WHEN training asks for 1 GPU at 100 s: the last-admitted Job is preempted and stops after 30 s grace
    sim.train_at(100.0, 1, 1000.0)
    ledger = sim.run()
    # THEN training starts at 130 (30 GPU-s lost); the requeued Job restarts when the other ends at 180, ends 360
    assert ledger.preemptions == 1
    assert ledger.training_wait_gpu_s == 30.0 and ledger.training_preempt_wait_gpu_s == 30.0
    assert ledger.records[0].verdict_s == 360.0
    assert ledger.eval_lost_s == 130.0 and ledger.eval_useful_s == 360.0


def test_the_most_recently_admitted_job_is_preempted_first() -> None:
    # A (one 300 s Job) starts at 0, B at 50; training asks at 100: B is evicted (50 s run + 30 s grace lost),
    # restarts when A ends at 300 and ends at 600. Evicting A instead would give A 650 and B 350.
    sim = _sim(2, PolicyConfig(), [300.0])
    sim.save_at(0.0, "a", 25)
    sim.save_at(50.0, "b", 25)
    sim.train_at(100.0, 1, 1000.0)
    ledger = sim.run()
    assert {r.experiment: r.verdict_s for r in ledger.records} == {"a": 300.0, "b": 600.0}
    assert ledger.eval_lost_s == 80.0


def test_evaluation_within_its_quota_is_not_preempted() -> None:
    # quota 2 of 2 GPUs: training's quota is 0, so it queues behind training (never admitted), evaluation runs on
    sim = _sim(2, PolicyConfig(), [180.0, 180.0], quota=2)
    sim.save_at(0.0, "exp", 25)
    sim.train_at(100.0, 1, 1000.0)
    ledger = sim.run()
    assert ledger.preemptions == 0 and ledger.records[0].verdict_s == 180.0


def test_without_kueue_training_waits_for_evaluation() -> None:
    # The same case first-come first-served: training waits until the first Job ends at 180 (80 GPU-s lost)
    sim = _sim(2, PolicyConfig(), [180.0, 180.0], kueue=False)
    sim.save_at(0.0, "exp", 25)
    sim.train_at(100.0, 1, 1000.0)
    ledger = sim.run()
    assert ledger.preemptions == 0 and ledger.training_wait_gpu_s == 80.0
    assert ledger.records[0].verdict_s == 180.0


def test_training_run_saves_every_k_steps_and_the_final_step() -> None:
    cfg = TrainingConfig(every_steps=25, run_steps=60, step_s=10.0)
    assert cfg.save_offsets() == [(25, 250.0), (50, 500.0), (60, 600.0)]
    sim = _sim(4, PolicyConfig(), [100.0])
    sim.env.process(sim.training_run("exp", cfg))
    ledger = sim.run()
    assert [(r.step, r.saved_s, r.final, r.verdict_s) for r in ledger.records] == [
        (25, 250.0, False, 350.0),
        (50, 500.0, False, 600.0),
        (60, 600.0, True, 700.0),
    ]
    assert ledger.training_gpu_s == 600.0


def test_shards_are_whole_tasks_balanced() -> None:
    assert split_tasks(10, 1) == [10]
    assert split_tasks(10, 3) == [4, 3, 3]
    assert split_tasks(10, 20) == [1] * 10
    # the measured suite-runs (bench/results/gpu_suites.json, slowest of each): 265.0, 300.2, 329.5, 501.7 s
    assert [s.run_s for s in EvalCost().suites] == [265.0, 300.2, 329.5, 501.7]
    # libero_10 (501.7 s, 43 s fixed) in 2 shards of 5 tasks: 45 + 43 + 458.7 / 2 each
    libero_10 = EvalCost().suites[-1]
    assert EvalCost(shards=2).shard_seconds(libero_10) == pytest.approx([317.35, 317.35])
    # the protocol: 12 suite-runs of (45 + run) seconds, 3 x 1,396.4 = 4,189.2 s of them measured
    assert EvalCost().gpu_seconds() == pytest.approx(4189.2 + 12 * 45.0)


def test_shards_shorten_the_wall_time_on_an_idle_cluster() -> None:
    # 16 idle GPUs. 1 shard: the verdict is the longest Job, 45 + 501.7 = 546.7 s.
    # 2 shards (88 s of overhead and fixed part each, plus half the stepping): 24 Jobs, the 16 longest start
    # (6 x 317.35 libero_10, 6 x 231.25 goal, 4 x 216.6 object). At 216.6 the last 2 object shards and 2 spatial
    # shards (199 s) start: the objects end at 433.2, those spatial ones at 415.6. At 231.25 the other 4 spatial
    # shards start and end at 430.25. Verdict: 433.2 s.
    rows = {r["shards"]: r for r in idle_cluster(Scenario())}
    assert rows[1]["verdict_s"] == 546.7
    assert rows[2]["verdict_s"] == 433.2
    assert rows[2]["gpu_s"] > rows[1]["gpu_s"]  # sharding is not free: start-up once per Job


def test_same_seed_same_figures_and_kueue_protects_training() -> None:
    training = TrainingConfig(runs=4, run_steps=100)
    small = Scenario(training=training, cluster=ClusterConfig(gpus=6, eval_quota=1), hours=6.0, seed=3)
    kueue = simulate(small)
    assert summarize(kueue) == summarize(simulate(small))
    fifo = simulate(replace(small, cluster=ClusterConfig(gpus=6, kueue=False)))
    # under Kueue training loses at most the grace period of each preemption; first-come first-served, far more
    assert kueue.preemptions > 0
    assert kueue.training_wait_gpu_s <= kueue.preemptions * 30.0
    assert fifo.training_wait_gpu_s > kueue.training_wait_gpu_s


def test_policy_names_are_the_intakes() -> None:
    with pytest.raises(ValueError, match="all, latest or every:K"):
        PolicyConfig(when_free="newest")


def test_cli_writes_the_results_and_plots(tmp_path: Path) -> None:
    out, plots = tmp_path / "sim.json", tmp_path / "plots"
    args = ["--out", str(out), "--plots", str(plots), "--replications", "1", "--runs", "2", "--gpus", "4"]
    assert main([*args, "--hours", "3", "--run-steps", "100"]) == 0
    doc = json.loads(out.read_text())
    assert doc["measured"]["protocol_gpu_s_without_job_overhead"] == pytest.approx(4189.2)
    assert {r["admission"] for r in doc["rows"]} == {"kueue", "fifo (no Kueue)"}
    assert sorted(p.name for p in plots.iterdir()) == [
        "evaluated_vs_cost.png",
        "shard_effect.png",
        "time_to_verdict_cdf.png",
        "training_loss.png",
    ]
