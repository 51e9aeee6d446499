"""Every guard of the verdict paths, each with a test that fails when the guard is deleted.

A guard is a condition that withholds or redirects a verdict: an incomplete side, a report without
per-state outcomes, a task subset, a later or same checkpoint in the history, best == previous.
"""

from __future__ import annotations

from rlinf_bench.baselines import Baseline, get_baseline
from rlinf_bench.contracts import CheckpointReport, RunStatus, SuiteReport, VerdictValue
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint, aggregate_suite
from rlinf_bench.stats.verdicts import (
    VerdictConfig,
    apply_verdicts,
    average_verdicts,
    baseline_verdicts,
    pick_previous_and_best,
    reference_verdict,
)
from tests.unit.stats.runfactory import checkpoint, make_run

CFG = VerdictConfig()
GOOD = [1] * 45 + [0] * 5
BAD = [1] * 10 + [0] * 40


def suite(
    per_state: list[int], *, step: int = 100, runs: int = 3, failed: bool = False, tasks: int = 10
) -> SuiteReport:
    """``runs`` complete runs; ``failed`` adds a failed run (so the suite expects runs + 1)."""
    made = [make_run({t: per_state for t in range(tasks)}, run_index=i, ckpt=checkpoint(step)) for i in range(runs)]
    if failed:
        made.append(
            make_run({}, run_index=runs, status=RunStatus.FAILED, error="OOMKilled", ckpt=checkpoint(step), trials=50)
        )
    return aggregate_suite([SourcedRun(f"{step}-{r.run_index}", r) for r in made], runs + failed)


def report(per_state: list[int], step: int, *, failed: bool = False) -> CheckpointReport:
    made = [make_run({t: per_state for t in range(10)}, run_index=i, ckpt=checkpoint(step)) for i in range(3)]
    if failed:
        made[2] = make_run(
            {}, run_index=2, status=RunStatus.FAILED, error="OOMKilled", ckpt=checkpoint(step), trials=50
        )
    return aggregate_checkpoint([SourcedRun(f"{step}-{r.run_index}", r) for r in made])


def without_states(s: SuiteReport) -> SuiteReport:
    """A complete suite with no per-state outcomes (a report nobody aggregated from its runs)."""
    return s.model_copy(update={"states": []})


# -- previous / best: incomplete on either side ---------------------------------------------------------
def test_given_an_incomplete_current_checkpoint_then_previous_is_incomplete_even_when_the_drop_is_obvious() -> None:
    v = reference_verdict(suite(BAD, failed=True), suite(GOOD), kind="previous", label="global_step 100", cfg=CFG)
    assert v.value == VerdictValue.INCOMPLETE and "run 3 failed" in v.reason and v.p_value is None


def test_given_an_incomplete_current_checkpoint_in_history_then_previous_and_best_are_incomplete() -> None:
    best, prev = report(GOOD, 100), report([1] * 30 + [0] * 20, 200)
    current = apply_verdicts(report(BAD, 300, failed=True), [], [best, prev])
    kinds = {v.kind: v for v in current.verdicts}
    assert set(kinds) == {"previous", "best"}
    assert all(v.value == VerdictValue.INCOMPLETE for v in kinds.values())


def test_given_an_incomplete_reference_then_the_verdict_is_incomplete_and_names_it() -> None:
    v = reference_verdict(suite(BAD), suite(GOOD, failed=True), kind="previous", label="global_step 100", cfg=CFG)
    assert v.value == VerdictValue.INCOMPLETE and v.reason == "reference global_step 100 has 3 of 4 runs completed"


def test_given_an_explicit_incomplete_previous_report_then_incomplete() -> None:
    current = apply_verdicts(report(BAD, 300), [], previous_report=report(GOOD, 200, failed=True))
    (v,) = current.verdicts
    assert v.kind == "previous" and v.value == VerdictValue.INCOMPLETE


def test_given_a_report_without_per_state_outcomes_then_previous_is_incomplete_on_either_side() -> None:
    v = reference_verdict(without_states(suite(BAD)), suite(GOOD), kind="previous", label="x", cfg=CFG)
    assert v.value == VerdictValue.INCOMPLETE and "no per-state outcomes" in v.reason
    v = reference_verdict(suite(BAD), without_states(suite(GOOD)), kind="previous", label="x", cfg=CFG)
    assert v.value == VerdictValue.INCOMPLETE


# -- history: which earlier checkpoints count ----------------------------------------------------------
def test_given_an_incomplete_earlier_checkpoint_then_it_is_never_the_previous_one() -> None:
    older, broken = report(GOOD, 100), report(BAD, 200, failed=True)
    prev, best = pick_previous_and_best(report(GOOD, 300), [older, broken], "libero_spatial")
    assert prev is not None and prev[0] == "global_step 100" and best is not None and best[0] == "global_step 100"


def test_given_the_same_checkpoint_in_history_then_it_is_not_its_own_previous() -> None:
    same = report(GOOD, 300).model_copy(update={"global_step": 200})  # same URI, mislabelled step
    prev, _ = pick_previous_and_best(report(GOOD, 300), [same], "libero_spatial")
    assert prev is None


def test_given_a_history_without_the_suite_then_no_reference() -> None:
    other = report(GOOD, 100)
    other.suites[0].suite = "libero_goal"
    assert pick_previous_and_best(report(GOOD, 300), [other], "libero_spatial") == (None, None)


def test_given_best_is_the_previous_checkpoint_then_only_one_reference_verdict() -> None:
    current = apply_verdicts(report(BAD, 300), [], [report(BAD, 100), report(GOOD, 200)])
    assert [v.kind for v in current.verdicts] == ["previous"]


def test_given_an_explicit_previous_report_then_no_best_verdict() -> None:
    current = apply_verdicts(report(BAD, 300), [], [report(GOOD, 50)], previous_report=report(BAD, 200))
    assert [v.kind for v in current.verdicts] == ["previous"]


# -- baselines and averages ----------------------------------------------------------------------------
def _custom(value: float, average: float | None = None) -> Baseline:
    return Baseline(
        name="t/custom",
        model="m",
        benchmark="libero",
        level="suite",
        values={"libero_spatial": value},
        average=average,
        source="t",
    )


def test_given_a_complete_report_without_states_then_the_baseline_verdict_is_incomplete() -> None:
    (v,) = baseline_verdicts(without_states(suite(BAD)), [_custom(95.0)], CFG)
    assert v.value == VerdictValue.INCOMPLETE and "no per-state outcomes" in v.reason


def test_given_an_incomplete_suite_then_the_baseline_verdict_is_incomplete() -> None:
    (v,) = baseline_verdicts(suite(BAD, failed=True), [_custom(95.0)], CFG)
    assert v.value == VerdictValue.INCOMPLETE and "3 of 4 runs" in v.reason


def test_given_a_per_task_baseline_on_a_task_subset_then_it_is_still_compared() -> None:
    names = {0: "lift_pot"}
    runs = [make_run({0: [1] * 20}, suite="robotwin", run_index=i, task_names=names) for i in range(3)]
    s = aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(runs)], 3)
    (v,) = baseline_verdicts(s, [get_baseline("robotwin-tasks/rlinf-grpo")], CFG)
    assert v.value == VerdictValue.ABOVE  # the subset guard applies to suite-level numbers only


def test_given_a_suite_without_states_then_the_average_is_incomplete() -> None:
    r = report(BAD, 100)
    r.suites[0] = without_states(r.suites[0])
    (v,) = average_verdicts(r, [_custom(95.0, average=95.0)], CFG)
    assert v.value == VerdictValue.INCOMPLETE and "libero_spatial" in v.reason


def test_given_an_incomplete_suite_then_the_average_is_incomplete() -> None:
    (v,) = average_verdicts(report(BAD, 100, failed=True), [_custom(95.0, average=95.0)], CFG)
    assert v.value == VerdictValue.INCOMPLETE


def test_given_a_complete_suite_then_the_average_is_tested() -> None:
    (v,) = average_verdicts(report(BAD, 100), [_custom(95.0, average=95.0)], CFG)
    assert v.value == VerdictValue.BELOW and v.p_value is not None


def test_given_a_per_task_baseline_under_another_protocol_then_each_task_is_not_comparable() -> None:
    from rlinf_bench.protocols import BaselineProtocol

    greedy = BaselineProtocol(
        name="oft", max_steps={"robotwin": 220}, settle_steps=10, settle_gripper=-1, decoding="greedy", source="t"
    )
    per_task = Baseline(
        name="t/tasks", model="m", benchmark="robotwin", level="task", values={"lift_pot": 50.0}, source="t"
    ).model_copy(update={"protocol": greedy})
    runs = [make_run({0: [1] * 20}, suite="robotwin", run_index=i, task_names={0: "lift_pot"}) for i in range(3)]
    s = aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(runs)], 3)
    (v,) = baseline_verdicts(s, [per_task], CFG)
    assert v.value == VerdictValue.NOT_COMPARABLE and v.task == "lift_pot" and v.p_value is None


def test_given_an_incomplete_checkpoint_then_no_states_are_listed_as_flipped() -> None:
    # Two good runs now fail state 0 that passed 3/3 before; the third run failed: nothing is decided.
    now = report([0, *GOOD[1:]], 300, failed=True)
    current = apply_verdicts(now, [], previous_report=report(GOOD, 200))
    assert current.suites[0].flips == [] and current.suites[0].flips_against == ""
    complete = apply_verdicts(report([0, *GOOD[1:]], 300), [], previous_report=report(GOOD, 200))
    assert len(complete.suites[0].flips) == 10  # state 0 of each of the 10 tasks
