"""Verdicts against baselines and earlier checkpoints, including the edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from rlinf_bench.baselines import Baseline, get_baseline
from rlinf_bench.contracts import RunStatus, VerdictValue
from rlinf_bench.reporting.format import verdict_against
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint, aggregate_suite
from rlinf_bench.stats.verdicts import VerdictConfig, apply_verdicts, baseline_verdicts, reference_verdict
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs, make_run

CFG = VerdictConfig()


def suite_of(per_state: list[int], runs: int = 3, tasks: int = 10) -> list:
    """Every task has the same per-state outcome pattern, repeated in each run."""
    return [make_run({t: per_state for t in range(tasks)}, run_index=i) for i in range(runs)]


def custom(value: float) -> Baseline:
    return Baseline(
        name="test/custom",
        model="m",
        benchmark="libero",
        level="suite",
        values={"libero_spatial": value},
        source="test",
    )


def verdict(runs: list, baseline: Baseline, runs_expected: int = 3) -> object:
    suite = aggregate_suite([SourcedRun(f"r{r.run_index}", r) for r in runs], runs_expected)
    (v,) = baseline_verdicts(suite, [baseline], CFG)
    return v


def test_given_a_policy_at_paper_level_then_within() -> None:
    v = verdict(suite_of([1] * 46 + [0] * 4), get_baseline("libero/openvla-oft-sft"))  # 92 % vs 91.6
    assert v.value == VerdictValue.WITHIN
    assert v.tolerance == 0.02 and v.p_value is not None and v.p_value >= 0.05 and "score test" in v.test


def test_given_a_clearly_worse_policy_then_below_with_a_small_p_value() -> None:
    v = verdict(suite_of([1] * 40 + [0] * 10), get_baseline("libero/openvla-oft-rlinf"))  # 80 % vs 99.4
    assert v.value == VerdictValue.BELOW and v.p_value is not None and v.p_value < 1e-6
    assert v.difference == pytest.approx(0.8 - 0.994)


def test_given_0_percent_then_below_any_real_baseline() -> None:
    assert verdict(suite_of([0] * 50), get_baseline("libero/one-traj-sft")).value == VerdictValue.BELOW


def test_given_100_percent_then_above_a_weaker_baseline() -> None:
    v = verdict(suite_of([1] * 50), get_baseline("libero/openvla-oft-sft"))
    assert v.value == VerdictValue.ABOVE and v.p_value_above is not None and v.p_value_above < 0.05


def test_given_a_baseline_of_100_then_100_percent_is_within_and_a_failure_is_not_fatal() -> None:
    assert verdict(suite_of([1] * 50), custom(100.0)).value == VerdictValue.WITHIN
    # One state failing in every run (98 %) is inside the 2-point tolerance.
    assert verdict(suite_of([1] * 49 + [0]), custom(100.0)).value == VerdictValue.WITHIN


def test_given_one_run_missing_then_incomplete_with_the_reason() -> None:
    v = verdict(suite_of([1] * 50, runs=2), get_baseline("libero/openvla-oft-rlinf"))
    assert v.value == VerdictValue.INCOMPLETE and "2 of 3 runs" in v.reason and v.p_value is None


def test_given_a_failed_run_then_incomplete_names_it() -> None:
    runs = [
        *suite_of([1] * 50, runs=2),
        make_run({}, run_index=2, status=RunStatus.FAILED, error="OOMKilled", trials=50),
    ]
    v = verdict(runs, get_baseline("libero/openvla-oft-rlinf"))
    assert v.value == VerdictValue.INCOMPLETE and "run 2 failed" in v.reason


def test_given_a_per_task_baseline_then_one_verdict_per_matching_task() -> None:
    names = {0: "lift_pot", 1: "beat_block_hammer", 2: "not_in_table"}
    runs = [make_run({t: [1] * 20 for t in names}, suite="robotwin", run_index=i, task_names=names) for i in range(3)]
    suite = aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(runs)], 3)
    vs = baseline_verdicts(suite, [get_baseline("robotwin-tasks/rlinf-grpo")], CFG)
    assert {v.task for v in vs} == {"lift_pot", "beat_block_hammer"}
    assert all(v.value == VerdictValue.ABOVE for v in vs if v.task == "lift_pot")


def _pair(rng: np.random.Generator, rates: np.ndarray, drop: float, step: int) -> tuple:
    prev = heterogeneous_runs(rng, rates, ckpt=checkpoint(step))
    cur = heterogeneous_runs(rng, np.clip(rates - drop, 0, 1), ckpt=checkpoint(step + 100))
    return prev, cur


def test_given_same_states_then_previous_checkpoint_is_compared_paired() -> None:
    rng = np.random.default_rng(5)
    rates = rng.beta(2, 0.4, size=(10, 50))
    prev, cur = _pair(rng, rates, drop=0.15, step=100)
    a = aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(cur)], 3)
    b = aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(prev)], 3)
    v = reference_verdict(a, b, kind="previous", label="global_step 100", cfg=CFG)
    assert v.paired and v.test.startswith("paired") and v.units == 500
    assert v.value == VerdictValue.BELOW


def test_given_different_seeds_then_two_proportion_test() -> None:
    a = aggregate_suite([SourcedRun(str(i), make_run({0: [1] * 30}, run_index=i)) for i in range(3)], 3)
    other = [make_run({0: [1] * 30}, run_index=i) for i in range(3)]
    other = [
        r.with_tasks(
            [
                r.tasks[0].model_copy(
                    update={"episodes": [e.model_copy(update={"seed": 99}) for e in r.tasks[0].episodes]}
                )
            ]
        )
        for r in other
    ]
    b = aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(other)], 3)
    v = reference_verdict(a, b, kind="previous", label="x", cfg=CFG)
    assert not v.paired and v.test.startswith("two-proportion")
    assert v.value == VerdictValue.WITHIN  # both 100 %: no difference to detect


def test_given_a_previous_checkpoint_on_all_tasks_then_a_two_task_checkpoint_is_not_above_it() -> None:
    # issue 24: tasks {0, 1} at 100 % were declared `above` a previous checkpoint that ran all 10 tasks.
    def report(step: int, tasks: int, per_state: list[int]):
        made = [make_run({t: per_state for t in range(tasks)}, run_index=i, ckpt=checkpoint(step)) for i in range(3)]
        return aggregate_checkpoint([SourcedRun(f"{step}-{i}", r) for i, r in enumerate(made)])

    previous = report(100, 10, [1] * 10 + [0] * 40)
    current = apply_verdicts(report(200, 2, [1] * 50), [], [previous])
    (v,) = current.verdicts
    assert v.kind == "previous" and v.value == VerdictValue.NOT_COMPARABLE and v.p_value is None
    assert "task sets differ: this checkpoint ran tasks {0, 1}, the reference ran 0-9" in v.reason
    assert v.reference_label == "global_step 100"


def test_given_an_easier_task_set_in_history_then_it_is_never_chosen_as_best() -> None:
    def report(step: int, tasks: int, per_state: list[int]):
        made = [make_run({t: per_state for t in range(tasks)}, run_index=i, ckpt=checkpoint(step)) for i in range(3)]
        return aggregate_checkpoint([SourcedRun(f"{step}-{i}", r) for i, r in enumerate(made)])

    easy = report(100, 1, [1] * 50)  # one task at 100 %: highest rate, other task set
    alike = report(200, 10, [1] * 45 + [0] * 5)
    previous = report(300, 10, [1] * 30 + [0] * 20)
    current = apply_verdicts(report(400, 10, [1] * 30 + [0] * 20), [], [easy, alike, previous])
    kinds = {v.kind: v for v in current.verdicts}
    assert kinds["best"].reference_label == "global_step 200" and kinds["best"].value == VerdictValue.BELOW
    assert kinds["previous"].reference_label == "global_step 300"


def test_given_history_then_previous_and_best_are_chosen_by_step_and_rate() -> None:
    def report(step: int, per_state: list[int]):
        runs = [make_run({0: per_state}, run_index=i, ckpt=checkpoint(step)) for i in range(3)]
        return aggregate_checkpoint([SourcedRun(f"{step}-{i}", r) for i, r in enumerate(runs)])

    best = report(100, [1] * 40)
    previous = report(200, [1] * 20 + [0] * 20)
    later = report(400, [1] * 40)  # after the current checkpoint: ignored
    current = apply_verdicts(report(300, [1] * 20 + [0] * 20), [], [best, previous, later])
    kinds = {v.kind: v for v in current.verdicts}
    assert kinds["previous"].reference_label == "global_step 200"
    # 40 states, no change: no drop, but no power either (one task) - never "within".
    assert kinds["previous"].value == VerdictValue.INCONCLUSIVE
    assert kinds["best"].reference_label == "global_step 100" and kinds["best"].value == VerdictValue.BELOW


def test_given_a_smoke_budget_on_a_task_subset_then_no_verdict_against_the_paper() -> None:
    # 1 task x 2 initial states x 3 runs, all failing (what the demo's toy policy produces): the
    # paper's number averages all 10 tasks, so a one-task rate is not compared with it.
    runs = [make_run({0: [0, 0]}, run_index=i) for i in range(3)]
    v = verdict(runs, get_baseline("libero/openvla-oft-sft"))
    assert v.value == VerdictValue.INCOMPLETE and v.p_value is None
    assert "only 1 of 10 tasks evaluated" in v.reason and v.estimate == 0.0


def test_given_a_smoke_budget_over_every_task_at_0_percent_then_below_the_paper() -> None:
    # 10 tasks x 2 initial states x 3 runs, all failing.
    runs = [make_run({t: [0, 0] for t in range(10)}, run_index=i) for i in range(3)]
    v = verdict(runs, get_baseline("libero/openvla-oft-sft"))
    assert v.value == VerdictValue.BELOW and "normal" in v.test


LIBERO4 = ["libero_spatial", "libero_object", "libero_goal", "libero_10"]


def _four_suites(rates: dict[str, float], runs: int = 3, missing: str | None = None):
    rng = np.random.default_rng(17)
    out = []
    for suite, rate in rates.items():
        for r in heterogeneous_runs(rng, np.full((10, 50), rate), suite=suite, runs=runs):
            if not (suite == missing and r.run_index == 2):
                out.append(SourcedRun(f"{suite}-{r.run_index}", r))
    return aggregate_checkpoint(out)


def test_given_all_four_libero_suites_then_the_mean_is_tested_against_the_papers_average() -> None:
    from rlinf_bench.stats import clustered_interval

    report = apply_verdicts(
        _four_suites(dict(zip(LIBERO4, [0.9, 0.95, 0.9, 0.85], strict=True))), [get_baseline("libero/openvla-oft-sft")]
    )
    (avg,) = report.average_verdicts
    suites = [report.suite(s) for s in LIBERO4]
    ests = [clustered_interval([x.successes for x in s.states], [x.trials for x in s.states]) for s in suites]
    mean = sum(e.rate for e in ests) / 4
    # Independent route: the variance of a mean of 4 independent estimates under the null.
    p0 = 0.91 - 0.02
    var = sum(p0 * (1 - p0) / e.effective_n for e in ests) / 16
    assert avg.suite == "average" and avg.reference == pytest.approx(0.91)
    assert avg.estimate == pytest.approx(mean)
    assert avg.statistic == pytest.approx((mean - p0) / var**0.5)
    assert avg.value == VerdictValue.WITHIN
    assert avg in report.verdicts


def test_given_one_suite_the_average_test_is_the_suite_test() -> None:
    runs = suite_of([1] * 45 + [0] * 5)
    one = Baseline(
        name="t/one", model="m", benchmark="b", level="suite", values={"libero_spatial": 95.0}, average=95.0, source="t"
    )
    report = apply_verdicts(aggregate_checkpoint([SourcedRun(str(r.run_index), r) for r in runs]), [one])
    (suite_v,) = report.suites[0].verdicts
    (avg_v,) = report.average_verdicts
    assert (avg_v.statistic, avg_v.p_value, avg_v.value) == pytest.approx(
        (suite_v.statistic, suite_v.p_value, suite_v.value)
    )


def test_given_a_suite_missing_then_no_average_and_an_incomplete_suite_makes_it_incomplete() -> None:
    three = _four_suites(dict(zip(LIBERO4[:3], [0.9, 0.9, 0.9], strict=True)))
    assert apply_verdicts(three, [get_baseline("libero/openvla-oft-sft")]).average_verdicts == []
    partial = _four_suites(dict(zip(LIBERO4, [0.9] * 4, strict=True)), missing="libero_goal")
    (avg,) = apply_verdicts(partial, [get_baseline("libero/openvla-oft-sft")]).average_verdicts
    assert avg.value == VerdictValue.INCOMPLETE and "libero_goal" in avg.reason


# -- protocols ----------------------------------------------------------------------------------------
def _runs(per_state: list[int], protocol: str, suite: str = "libero_spatial") -> list:
    return [make_run({t: per_state for t in range(10)}, run_index=i, protocol=protocol, suite=suite) for i in range(3)]


def test_given_an_oft_protocol_run_then_an_rlinf_baseline_is_not_comparable_whatever_the_rate() -> None:
    for per_state in ([0] * 50, [1] * 50):
        v = verdict(_runs(per_state, "oft"), get_baseline("libero/openvla-oft-rlinf"))
        assert v.value == VerdictValue.NOT_COMPARABLE
        assert v.test == "" and v.p_value is None and v.difference is None
        assert "max steps 220 vs 512" in v.reason and "settle steps 10 vs 15" in v.reason
        assert "settle gripper -1 vs 0" in v.reason and "--protocol rlinf" in v.reason


def test_given_the_rlinf_protocol_with_a_shorter_horizon_then_the_fix_is_to_leave_out_the_override() -> None:
    runs = _runs([1] * 50, "rlinf")
    short = [
        r.model_copy(update={"protocol": r.protocol.model_copy(update={"max_steps": 130, "overrides": ["max_steps"]})})
        for r in runs
    ]
    v = verdict(short, get_baseline("libero/openvla-oft-rlinf"))
    assert v.value == VerdictValue.NOT_COMPARABLE and "max steps 130 vs 512" in v.reason
    assert "leave out --max-steps" in v.reason and "--protocol rlinf" not in v.reason  # it already is rlinf


def test_given_the_rlinf_protocol_but_greedy_decoding_then_a_verdict_that_names_the_decoding() -> None:
    runs = _runs([1] * 49 + [0], "rlinf")
    greedy = [r.model_copy(update={"protocol": r.protocol.model_copy(update={"decoding": "greedy"})}) for r in runs]
    v = verdict(greedy, get_baseline("libero/openvla-oft-rlinf"))
    # Same episodes (steps, settle), other decoding: tested, and the difference travels with the verdict.
    assert v.value in (VerdictValue.WITHIN, VerdictValue.BELOW, VerdictValue.ABOVE)
    assert v.p_value is not None and v.test
    assert v.caveat == "decoding differs: greedy vs sampled T=1.6"
    assert verdict_against(v) == "libero/openvla-oft-rlinf (decoding differs: greedy vs sampled T=1.6)"


def test_given_the_same_decoding_as_the_paper_then_no_caveat() -> None:
    v = verdict(_runs([1] * 49 + [0], "rlinf"), get_baseline("libero/openvla-oft-rlinf"))
    assert v.caveat == "" and verdict_against(v) == "libero/openvla-oft-rlinf"


def test_given_greedy_runs_of_all_four_suites_then_the_papers_average_is_tested_with_the_decoding_named() -> None:
    runs = [r for s in LIBERO4 for r in _runs([1] * 49 + [0], "rlinf", suite=s)]
    greedy = [r.model_copy(update={"protocol": r.protocol.model_copy(update={"decoding": "greedy"})}) for r in runs]
    report = apply_verdicts(
        aggregate_checkpoint([SourcedRun(f"{r.suite}{r.run_index}", r) for r in greedy]),
        [get_baseline("libero/openvla-oft-rlinf")],
    )
    (avg,) = report.average_verdicts
    assert avg.value != VerdictValue.NOT_COMPARABLE and avg.caveat == "decoding differs: greedy vs sampled T=1.6"


def test_given_a_run_with_the_default_protocol_then_the_default_baseline_is_comparable() -> None:
    from rlinf_bench.contracts import CheckpointRef, EvalRequest

    request = EvalRequest(
        checkpoint=CheckpointRef(uri="s3://b/e/checkpoints/global_step_1", experiment="e", global_step=1)
    )
    assert request.protocol == "rlinf"  # the protocol of the default baseline (the paper's numbers)
    assert {r.protocol for r in request.expand()} == {"rlinf"}
    v = verdict(_runs([1] * 49 + [0], request.protocol), get_baseline(request.baselines[0]))
    assert v.value != VerdictValue.NOT_COMPARABLE


def test_given_a_baseline_without_a_protocol_then_the_runs_protocol_does_not_matter() -> None:
    assert verdict(_runs([1] * 46 + [0] * 4, "oft"), custom(92.0)).value == VerdictValue.WITHIN


def test_given_an_oft_baseline_then_an_oft_run_is_compared_and_an_rlinf_run_is_not() -> None:
    from rlinf_bench.protocols import BaselineProtocol

    oft = custom(92.0).model_copy(
        update={
            "protocol": BaselineProtocol(
                name="oft",
                max_steps={"libero_spatial": 220},
                settle_steps=10,
                settle_gripper=-1,
                decoding="greedy",
                source="t",
            )
        }
    )
    assert verdict(_runs([1] * 46 + [0] * 4, "oft"), oft).value == VerdictValue.WITHIN
    assert verdict(_runs([1] * 46 + [0] * 4, "rlinf"), oft).value == VerdictValue.NOT_COMPARABLE


def test_given_oft_runs_of_all_four_suites_then_the_papers_average_is_not_comparable() -> None:
    runs = [r for s in LIBERO4 for r in _runs([1] * 45 + [0] * 5, "oft", suite=s)]
    report = apply_verdicts(
        aggregate_checkpoint([SourcedRun(f"{r.suite}{r.run_index}", r) for r in runs]),
        [get_baseline("libero/openvla-oft-sft")],
    )
    (avg,) = report.average_verdicts
    assert avg.value == VerdictValue.NOT_COMPARABLE and "libero_10: measured under another protocol" in avg.reason
    assert {v.value for v in report.verdicts} == {VerdictValue.NOT_COMPARABLE}


def test_given_episodes_failed_on_simulator_errors_then_every_verdict_notes_them() -> None:
    runs = _runs([1] * 48 + [0] * 2, "rlinf")
    first = runs[0]
    task0 = first.tasks[0]
    bad = task0.episodes[0].model_copy(update={"success": False, "error": "SimulatorError: MuJoCo warning"})
    runs[0] = first.with_tasks(
        [
            task0.model_copy(
                update={
                    "episodes": [bad, *task0.episodes[1:]],
                    "successes": task0.successes - 1,
                    "success_rate": (task0.successes - 1) / 50,
                }
            ),
            *first.tasks[1:],
        ]
    )
    report = apply_verdicts(
        aggregate_checkpoint([SourcedRun(str(r.run_index), r) for r in runs]),
        [get_baseline("libero/openvla-oft-rlinf")],
    )
    assert report.suites[0].episode_errors == 1
    (v,) = report.suites[0].verdicts
    assert "1 episode(s) ended by simulator errors and count as failures" in v.reason


# -- power: within only when the test could see a drop that matters ------------------------------------
def test_given_one_episode_per_task_then_no_drop_is_inconclusive_underpowered_never_within() -> None:
    def report(step: int) -> object:
        runs = [make_run({t: [1] for t in range(10)}, run_index=0, ckpt=checkpoint(step))]
        return aggregate_checkpoint([SourcedRun(f"{step}", r) for r in runs], runs_expected=1)

    before = report(100)
    now = apply_verdicts(report(200), [], [before])  # type: ignore[arg-type]
    (v,) = now.verdicts
    assert v.value == VerdictValue.INCONCLUSIVE
    assert v.mde is not None and v.mde > 0.5
    assert v.reason.startswith(f"underpowered: sees drops ≥ {100 * v.mde:.1f} pts")
    assert v.p_value is not None and v.test  # the test itself is unchanged, only its word


def test_given_the_briefs_budget_at_paper_level_then_within_stays_within() -> None:
    runs = heterogeneous_runs(np.random.default_rng(0), np.full((10, 50), 0.97))
    suite = aggregate_suite([SourcedRun(str(r.run_index), r) for r in runs], 3)
    (v,) = baseline_verdicts(suite, [get_baseline("libero/openvla-oft-rlinf")], VerdictConfig())
    assert v.value == VerdictValue.WITHIN and v.mde is not None and v.mde < v.tolerance + 0.05


def test_given_a_wider_power_margin_then_the_same_small_budget_is_within() -> None:
    def report(step: int, margin: float | None = None) -> object:
        runs = [make_run({0: [1] * 40}, run_index=i, ckpt=checkpoint(step)) for i in range(3)]
        return aggregate_checkpoint([SourcedRun(f"{step}-{r.run_index}", r) for r in runs])

    strict = apply_verdicts(report(200), [], [report(100)])  # type: ignore[arg-type]
    loose = apply_verdicts(report(200), [], [report(100)], VerdictConfig(power_margin=0.99))  # type: ignore[arg-type]
    assert strict.verdicts[0].value == VerdictValue.INCONCLUSIVE
    assert loose.verdicts[0].value == VerdictValue.WITHIN


def _greedy(suite: object) -> object:
    """The same suite report, decoded greedily (the rlinf protocol's runs sample at T=1.6)."""
    protocol = suite.protocol.model_copy(update={"decoding": "greedy"})  # type: ignore[attr-defined]
    return suite.model_copy(update={"protocol": protocol})  # type: ignore[attr-defined]


def test_given_checkpoints_that_differ_only_in_decoding_then_the_verdict_is_given_with_the_caveat() -> None:
    now = _greedy(aggregate_suite([SourcedRun(str(r.run_index), r) for r in suite_of([1, 1, 1, 1, 1])], 3))
    before = aggregate_suite([SourcedRun(str(r.run_index), r) for r in suite_of([0, 0, 0, 1, 1])], 3)
    v = reference_verdict(now, before, kind="previous", label="global_step 100", cfg=CFG)  # type: ignore[arg-type]
    assert v.value == VerdictValue.ABOVE and v.paired
    assert v.caveat == "decoding differs: greedy here, sampled T=1.6 at the reference"
    same = reference_verdict(before, before, kind="previous", label="global_step 100", cfg=CFG)
    assert same.caveat == ""
