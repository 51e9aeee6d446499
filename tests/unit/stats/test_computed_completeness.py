"""Complete is computed, never trusted: malformed RunResults are refused naming file and field, a run that
claims complete with episodes missing counts as incomplete, and runs sharing a seed are refused (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.baselines import get_baseline
from rlinf_bench.contracts import RunResult, RunStatus, VerdictValue
from rlinf_bench.errors import ContractError
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_suite, load_runs
from rlinf_bench.stats.verdicts import VerdictConfig, baseline_verdicts
from tests.unit.stats.runfactory import make_run

PAPER = get_baseline("libero/openvla-oft-sft")


def written(tmp_path: Path, edit: Any) -> str:
    """A valid run's JSON, changed by ``edit(doc)``, written to a file."""
    doc = json.loads(make_run({0: [1, 0, 1], 1: [1, 1, 0]}).to_json())
    edit(doc)
    path = tmp_path / "run0.json"
    path.write_text(json.dumps(doc))
    return str(path)


def refusal(tmp_path: Path, edit: Any) -> str:
    uri = written(tmp_path, edit)
    with pytest.raises(ContractError) as err:
        load_runs([uri])
    assert uri in str(err.value)
    return str(err.value)


def test_given_a_non_boolean_success_then_the_file_is_refused_naming_the_field(tmp_path: Path) -> None:
    def one(doc: dict[str, Any]) -> None:
        doc["tasks"][0]["episodes"][0]["success"] = 1  # counted as a success before

    assert "success" in refusal(tmp_path, one)


def test_given_an_initial_state_played_twice_then_the_file_is_refused(tmp_path: Path) -> None:
    def twice(doc: dict[str, Any]) -> None:
        doc["tasks"][0]["episodes"][1]["init_state"] = 0

    assert "episodes[1].init_state=0 repeats episodes[0]" in refusal(tmp_path, twice)


def test_given_a_task_listed_twice_then_the_file_is_refused(tmp_path: Path) -> None:
    def twice(doc: dict[str, Any]) -> None:
        doc["tasks"][1]["task_id"] = 0

    assert "tasks[1].task_id=0 repeats tasks[0]" in refusal(tmp_path, twice)


def test_given_an_initial_state_outside_the_suite_then_the_file_is_refused(tmp_path: Path) -> None:
    def outside(doc: dict[str, Any]) -> None:
        doc["tasks"][1]["episodes"][2]["init_state"] = 50  # libero_spatial ships 50: 0-49

    msg = refusal(tmp_path, outside)
    assert "field tasks[1].episodes[2].init_state: 50 is outside the 50 initial states of suite libero_spatial" in msg


def test_given_a_task_outside_the_suite_then_the_file_is_refused(tmp_path: Path) -> None:
    def outside(doc: dict[str, Any]) -> None:
        doc["tasks"][1]["task_id"] = 10

    assert "field tasks[1].task_id: 10 is outside suite libero_spatial" in refusal(tmp_path, outside)


def test_given_an_unknown_suite_then_the_file_is_refused_with_the_closest_name(tmp_path: Path) -> None:
    def typo(doc: dict[str, Any]) -> None:
        doc["suite"] = "libero_spatail"

    msg = refusal(tmp_path, typo)
    assert "field suite" in msg and "libero_spatial" in msg


def claims_complete(outcomes: dict[int, list[int]], trials: int, run_index: int) -> RunResult:
    return make_run(outcomes, run_index=run_index, trials=trials, status=RunStatus.COMPLETE)


def test_given_complete_claimed_with_one_episode_of_50_per_task_then_incomplete_and_no_verdict() -> None:
    # Before: all ten tasks failing their one episode each gave `below` the paper.
    runs = [claims_complete({t: [0] for t in range(10)}, 50, i) for i in range(3)]
    suite = aggregate_suite([SourcedRun(f"run{i}.json", r) for i, r in enumerate(runs)], 3)
    assert not suite.complete and suite.runs_completed == 0
    assert suite.runs[0].status == RunStatus.INCOMPLETE
    assert "claims status complete, but task 0 holds 1 of 50 trials" in (suite.runs[0].error or "")
    (v,) = baseline_verdicts(suite, [PAPER], VerdictConfig())
    assert v.value == VerdictValue.INCOMPLETE and v.p_value is None


def test_given_complete_claimed_with_8_of_10_tasks_empty_then_incomplete() -> None:
    runs = []
    for i in range(3):
        r = claims_complete({t: [1] * 50 if t < 2 else [] for t in range(10)}, 50, i)
        runs.append(r)
    suite = aggregate_suite([SourcedRun(f"run{i}.json", r) for i, r in enumerate(runs)], 3)
    assert not suite.complete
    assert "task 2 holds 0 of 50 trials" in (suite.runs[0].error or "")
    assert "more task(s) short" in (suite.runs[0].error or "")


def test_given_three_runs_with_one_seed_then_the_repeats_are_refused_and_the_suite_is_incomplete() -> None:
    runs = [make_run({t: [1] * 5 for t in range(10)}, run_index=i).model_copy(update={"seed": 7}) for i in range(3)]
    suite = aggregate_suite([SourcedRun(f"run{i}.json", r) for i, r in enumerate(runs)], 3)
    assert not suite.complete and suite.runs_completed == 1
    assert [r.status for r in suite.runs] == [RunStatus.COMPLETE, RunStatus.FAILED, RunStatus.FAILED]
    assert "seed 7 is also run 0's seed" in (suite.runs[2].error or "")
    (v,) = baseline_verdicts(suite, [PAPER], VerdictConfig())
    assert v.value == VerdictValue.INCOMPLETE and "run 1 failed" in v.reason
