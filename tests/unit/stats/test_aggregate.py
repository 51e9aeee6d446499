"""Aggregating three runs of a checkpoint into a SuiteReport / CheckpointReport."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from rlinf_bench.contracts import CheckpointReport, RunStatus
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.stats import clustered_interval, wilson
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint, aggregate_suite
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs, make_run


def sourced(runs: list) -> list[SourcedRun]:
    return [SourcedRun(f"run{r.run_index}-{r.suite}.json", r) for r in runs]


def test_given_three_runs_then_mean_std_and_intervals_follow_their_definitions() -> None:
    rng = np.random.default_rng(3)
    rates = rng.beta(2, 0.5, size=(4, 10))
    runs = heterogeneous_runs(rng, rates)
    suite = aggregate_suite(sourced(runs), runs_expected=3)

    per_run = [r.success_rate for r in runs]
    assert suite.success_rate_mean == pytest.approx(statistics.fmean(per_run))
    assert suite.success_rate_std == pytest.approx(statistics.stdev(per_run))
    k = sum(r.successes for r in runs)
    assert (suite.successes, suite.episodes, suite.clusters) == (k, 120, 40)
    assert (suite.wilson95_low, suite.wilson95_high) == pytest.approx(wilson(k, 120))
    # Clustered: recompute the (task, state) clusters independently from the raw episodes.
    clusters: dict[tuple[int, int], int] = {}
    for r in runs:
        for t in r.tasks:
            for e in t.episodes:
                clusters[(t.task_id, e.init_state)] = clusters.get((t.task_id, e.init_state), 0) + e.success
    ce = clustered_interval(list(clusters.values()), [3] * 40)
    assert (suite.ci95_low, suite.ci95_high) == pytest.approx((ce.low, ce.high))
    assert suite.complete and suite.runs_completed == 3
    task0 = suite.tasks[0]
    assert task0.run_success_rates == [r.tasks[0].success_rate for r in runs]
    assert task0.episodes == 30


def test_given_a_failed_run_then_it_is_listed_but_not_averaged() -> None:
    good = [make_run({0: [1, 1, 0, 1]}, run_index=i) for i in range(2)]
    failed = make_run({}, run_index=2, status=RunStatus.FAILED, error="worker crash loop", trials=4)
    suite = aggregate_suite(sourced([*good, failed]), runs_expected=3)
    assert not suite.complete and suite.runs_completed == 2
    assert suite.success_rate_mean == pytest.approx(0.75)
    assert suite.runs[2].status == RunStatus.FAILED and suite.runs[2].success_rate is None
    assert suite.episodes == 8  # only the two completed runs


def test_given_only_two_of_three_runs_then_the_suite_is_incomplete() -> None:
    runs = [make_run({0: [1, 0, 1]}, run_index=i) for i in range(2)]
    assert not aggregate_suite(sourced(runs), runs_expected=3).complete


def test_given_no_completed_run_then_statistics_are_absent_not_zero() -> None:
    failed = make_run({}, status=RunStatus.FAILED, error="image pull")
    suite = aggregate_suite(sourced([failed]), runs_expected=3)
    assert suite.success_rate_mean is None and suite.ci95_low is None and suite.episodes == 0


def test_given_runs_that_disagree_beyond_noise_then_the_flag_is_raised() -> None:
    states = 60
    runs = [make_run({0: [1] * states}, run_index=0), make_run({0: [1] * states}, run_index=1)]
    runs.append(make_run({0: [0] * states}, run_index=2))  # a broken node: everything fails
    suite = aggregate_suite(sourced(runs), runs_expected=3)
    assert suite.disagreement is not None and suite.disagreement.flagged
    assert suite.disagreement.test.startswith("Cochran")


def test_given_consistent_runs_then_no_disagreement_flag() -> None:
    rng = np.random.default_rng(4)
    runs = heterogeneous_runs(rng, np.full((2, 50), 0.8))
    suite = aggregate_suite(sourced(runs), runs_expected=3)
    assert suite.disagreement is not None and not suite.disagreement.flagged


def test_given_runs_of_different_checkpoints_then_the_error_names_both_files() -> None:
    a = make_run({0: [1]}, ckpt=checkpoint(100))
    b = make_run({0: [1]}, run_index=1, ckpt=checkpoint(200))
    with pytest.raises(ResultsMismatchError, match=r"run0-libero_spatial\.json.*run1-libero_spatial\.json"):
        aggregate_checkpoint(sourced([a, b]))


def test_given_the_same_run_twice_then_an_error() -> None:
    a = make_run({0: [1]})
    with pytest.raises(ResultsMismatchError, match="run 0"):
        aggregate_suite([SourcedRun("a.json", a), SourcedRun("b.json", a)], 3)


def test_given_mixed_policies_in_a_suite_then_an_error_names_the_field() -> None:
    a = make_run({0: [1]})
    b = make_run({0: [1]}, run_index=1, policy="remote:ws://x")
    with pytest.raises(ResultsMismatchError, match="field policy"):
        aggregate_suite(sourced([a, b]), 3)


def test_given_two_suites_then_the_checkpoint_rate_is_their_average_and_round_trips() -> None:
    runs = [make_run({0: [1, 1, 1, 0]}, run_index=i) for i in range(3)]
    runs += [make_run({0: [1, 0, 0, 0]}, suite="libero_goal", run_index=i) for i in range(3)]
    report = aggregate_checkpoint(sourced(runs))
    assert [s.suite for s in report.suites] == ["libero_goal", "libero_spatial"]
    assert report.success_rate == pytest.approx((0.75 + 0.25) / 2)
    assert report.global_step == 100 and report.complete
    again = CheckpointReport.from_json(report.to_json())
    assert again == report


def test_given_runs_over_different_task_lists_then_an_error_names_the_field() -> None:
    a = make_run({0: [1, 0], 1: [1, 1]})
    b = make_run({0: [1, 0]}, run_index=1)
    with pytest.raises(ResultsMismatchError, match="field tasks"):
        aggregate_suite(sourced([a, b]), 3)
