"""Failure reasons per task, and how they moved against the previous checkpoint: counts by hand, the paired test
over initial states with scipy, Holm over the suite's (task, reason) pairs."""

from __future__ import annotations

import pytest
from scipy import stats as scipy_stats

from rlinf_bench.contracts import FailureReason, Perturbation, PerturbationAxis, RunResult
from rlinf_bench.stats.pertask import holm
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.perturbedfactory import perturbed_run, report_of
from tests.unit.stats.runfactory import checkpoint

GRASP, DROPPED, TIMEOUT = FailureReason.GRASP_FAILED, FailureReason.DROPPED, FailureReason.TIMEOUT
STATES = 50


def by_task(task: int, state: int, run: int, p: Perturbation | None) -> FailureReason | None:
    """Task 3 fails by grasp, every other task by dropping; perturbed episodes time out; task 2's state 49
    carries no reason (a run from before reasons were recorded)."""
    if p is not None:
        return TIMEOUT
    if task == 2 and state == 49:
        return None
    return GRASP if task == 3 else DROPPED


def runs(step: int, failing: dict[int, list[set[int]]]) -> list[RunResult]:
    """Four tasks of 50 states, three runs: ``failing[task][run]`` the states that fail in that run."""
    made = []
    for r in range(3):
        control = {t: [0 if s in failing.get(t, [set()] * 3)[r] else 1 for s in range(STATES)] for t in range(4)}
        made.append(perturbed_run(control, {}, run_index=r, ckpt=checkpoint(step), reason_of=by_task))
    return made


def test_the_table_counts_each_tasks_failures_by_reason_with_unlabelled_and_perturbed_apart() -> None:
    failing = {2: [{48, 49}, {49}, set()], 3: [{0, 1, 2}, {0}, {0}]}
    made = runs(100, failing)
    made[0] = perturbed_run(
        {t: [int(s not in failing.get(t, [set()])[0]) for s in range(STATES)] for t in range(4)},
        {(PerturbationAxis.CAMERA, 1): {3: [0, 0, 1]}},
        run_index=0,
        ckpt=checkpoint(100),
        reason_of=by_task,
    )
    section = report_of(made).suites[0].failure_reasons
    assert section is not None
    rows = {t.task_id: t for t in section.tasks}
    assert rows[3].counts == {GRASP: 5} and rows[3].failures == 5 and rows[3].episodes == 150
    assert rows[3].perturbed == {TIMEOUT: 2}
    assert rows[2].counts == {DROPPED: 1} and rows[2].unlabelled == 2 and rows[2].failures == 3
    assert rows[0].counts == {} and rows[0].failures == 0
    state0 = next(s for s in report_of(made).suites[0].states if s.task_id == 3 and s.init_state == 0)
    assert [e.failure_reason for e in state0.episodes] == [GRASP, GRASP, GRASP]


def test_runs_without_any_reason_have_no_section() -> None:
    made = [perturbed_run({0: [1, 0]}, {}, run_index=r) for r in range(3)]
    assert report_of(made).suites[0].failure_reasons is None


def test_twelve_more_grasp_failures_on_task_3_move_decisively_and_a_one_episode_change_does_not() -> None:
    before = {3: [{0, 1, 2, 3}, set(), set()], 1: [{10}, set(), set()]}
    now = {3: [{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3}, {0, 1, 2, 3}], 1: [{10, 11}, set(), set()]}
    report = apply_verdicts(report_of(runs(200, now)), [], previous_report=report_of(runs(100, before)))
    section = report.suites[0].failure_reasons
    assert section is not None and section.against == "global_step 100"
    grasp, dropped = section.moves
    assert (grasp.task_id, grasp.reason, grasp.before, grasp.now, grasp.change) == (3, GRASP, 4, 16, 12)
    assert (dropped.task_id, dropped.reason, dropped.change) == (1, DROPPED, 1)
    # per state, the fraction of runs failing by grasp: now 1 (states 0-3), 1/3 (4-7); before 1/3 (0-3)
    now_f = [1.0] * 4 + [1 / 3] * 4 + [0.0] * 42
    before_f = [1 / 3] * 4 + [0.0] * 46
    p_grasp = scipy_stats.ttest_rel(now_f, before_f).pvalue
    p_dropped = scipy_stats.ttest_rel([0] * 10 + [1 / 3] * 2 + [0] * 38, [0] * 10 + [1 / 3] + [0] * 39).pvalue
    assert grasp.p_value == pytest.approx(p_grasp) and dropped.p_value == pytest.approx(p_dropped)
    assert [grasp.p_adjusted, dropped.p_adjusted] == pytest.approx(holm([p_grasp, p_dropped]))
    assert grasp.decisive and not dropped.decisive


def test_moves_are_not_counted_against_a_checkpoint_that_ran_other_tasks() -> None:
    before = report_of(runs(100, {3: [{0}, set(), set()]}))
    before.suites[0].states = [s for s in before.suites[0].states if s.task_id != 0]
    before.suites[0].tasks = [t for t in before.suites[0].tasks if t.task_id != 0]
    report = apply_verdicts(report_of(runs(200, {3: [{0, 1}, {0}, {0}]})), [], previous_report=before)
    section = report.suites[0].failure_reasons
    assert section is not None and section.moves == [] and section.note.startswith("no moves counted: not comparable")


def test_against_a_checkpoint_that_recorded_no_reasons_the_note_says_so() -> None:
    before = [
        perturbed_run({t: [1] * STATES for t in range(4)}, {}, run_index=r, ckpt=checkpoint(100)) for r in range(3)
    ]
    report = apply_verdicts(report_of(runs(200, {3: [{0}, set(), set()]})), [], previous_report=report_of(before))
    section = report.suites[0].failure_reasons
    assert section is not None and section.moves == [] and section.note == "global_step 100 recorded no failure reasons"
