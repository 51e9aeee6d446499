"""Two suite reports are compared only when they ran the same suite, tasks, trials per task and protocol."""

from __future__ import annotations

from rlinf_bench.contracts import SuiteReport
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_suite
from rlinf_bench.stats.reference_match import format_ids, reference_caveat, reference_differences
from tests.unit.stats.runfactory import make_run


def suite(tasks: int = 10, trials: int = 5, *, name: str = "libero_spatial", protocol: str = "rlinf") -> SuiteReport:
    runs = [
        make_run({t: [1] * trials for t in range(tasks)}, run_index=i, suite=name, protocol=protocol) for i in range(3)
    ]
    return aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(runs)], 3)


def test_given_the_same_evaluation_then_no_difference() -> None:
    assert reference_differences(suite(), suite()) == []


def test_given_a_task_subset_then_the_task_sets_are_named() -> None:
    (diff,) = reference_differences(suite(tasks=2), suite(tasks=10))
    assert diff == "task sets differ: this checkpoint ran tasks {0, 1}, the reference ran 0-9"


def test_given_other_trials_per_task_then_both_counts_are_named() -> None:
    assert reference_differences(suite(trials=5), suite(trials=3)) == [
        "trials per task differ: 5 here, 3 at the reference"
    ]


def test_given_another_protocol_then_each_setting_that_differs_is_named() -> None:
    diffs = reference_differences(suite(protocol="oft"), suite(protocol="rlinf"))
    assert "max steps differ: 220 here, 512 at the reference" in diffs
    assert "settle steps differ: 10 here, 15 at the reference" in diffs
    assert not any(d.startswith("decoding") for d in diffs)  # a caveat on the verdict, not a refusal


def test_given_only_the_decoding_differs_then_the_reports_compare_and_the_caveat_names_both() -> None:
    sampled = suite()
    greedy = sampled.model_copy(update={"protocol": sampled.protocol.model_copy(update={"decoding": "greedy"})})  # type: ignore[union-attr]
    assert reference_differences(greedy, sampled) == []
    assert reference_caveat(greedy, sampled) == "decoding differs: greedy here, sampled T=1.6 at the reference"
    assert reference_caveat(sampled, sampled) == ""


def test_given_another_suite_then_the_suites_are_named() -> None:
    diffs = reference_differences(suite(name="libero_goal"), suite(name="libero_spatial"))
    assert diffs[0] == "suites differ: this checkpoint ran libero_goal, the reference libero_spatial"


def test_task_ids_are_written_as_ranges_where_they_run_on() -> None:
    assert format_ids(set(range(10))) == "0-9"
    assert format_ids({0, 1}) == "{0, 1}"
    assert format_ids({0, 1, 2, 3, 7}) == "{0-3, 7}"
    assert format_ids(set()) == "{}"
