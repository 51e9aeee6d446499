"""The aggregate state on local storage: unusable result files fail their run by name; all-failed stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_aws.state_aggregate import AllRunsFailedError, aggregate
from rlinf_aws.state_notify_failure import cause_text
from rlinf_bench.contracts import CheckpointRef, CheckpointReport, EvalRequest, RunResult, SuiteSelection
from rlinf_bench.contracts.workflow import AggregateInput, AggregateResult, OutcomeStatus, RunOutcome, StateError
from rlinf_bench.document_store import Storage
from tests.unit.stats.runfactory import CKPT, checkpoint, make_run


def request(tmp_path: Path) -> EvalRequest:
    return EvalRequest(
        checkpoint=CheckpointRef.model_validate(CKPT.model_dump()),
        suites=[SuiteSelection(name="libero_spatial", tasks=[0])],
        trials_per_task=3,
        output_prefix=str(tmp_path),
        baselines=[],
    )


def ok(tmp_path: Path, i: int, run: RunResult | None = None) -> RunOutcome:
    """Outcome of run ``i`` whose file holds ``run`` (default: a good run ``i``)."""
    path = tmp_path / f"run{i}.json"
    (run or make_run({0: [1, 0, 1]}, run_index=i)).save(path)
    return RunOutcome(
        status=OutcomeStatus.SUCCEEDED, kind="eval", result_uri=str(path), suite="libero_spatial", run_index=i
    )


def aggregated(tmp_path: Path, outcomes: list[RunOutcome]) -> tuple[AggregateResult, CheckpointReport]:
    out = aggregate(
        AggregateInput(
            request=request(tmp_path), eval_items=[], result_root=str(tmp_path / "root"), outcomes=[outcomes, []]
        ),
        storage=Storage(),
    )
    return out, CheckpointReport.load(out.report_uri)


@pytest.mark.parametrize(
    ("wrong", "field"),
    [
        (make_run({0: [1, 0, 1]}, run_index=1), "field run_index is 1"),  # run 1's file where run 2's belongs
        (make_run({0: [1, 0, 1]}, run_index=2, ckpt=checkpoint(999)), "field checkpoint.uri"),
        (make_run({0: [1, 0, 1]}, run_index=2, suite="libero_goal"), "field suite is 'libero_goal'"),
        (make_run({0: [1, 0, 1]}, run_index=2, protocol="oft"), "field max_steps differs"),
    ],
)
def test_a_result_file_of_another_run_fails_only_that_run_and_the_others_are_aggregated(
    tmp_path: Path, wrong: RunResult, field: str
) -> None:
    out, report = aggregated(tmp_path, [ok(tmp_path, 0), ok(tmp_path, 1), ok(tmp_path, 2, wrong)])
    assert not out.complete
    (line,) = out.failed_runs
    assert line.startswith("libero_spatial run 2: ") and "run2.json" in line and field in line
    (suite,) = report.suites
    assert [(r.run_index, r.status.value) for r in suite.runs] == [(0, "complete"), (1, "complete"), (2, "failed")]
    assert field in (suite.runs[2].error or "")
    assert suite.runs_completed == 2 and suite.success_rate_mean == pytest.approx(2 / 3)


def test_a_run_with_an_initial_state_outside_the_suite_fails_that_run_naming_file_and_field(tmp_path: Path) -> None:
    bad = make_run({0: [1, 0, 1]}, run_index=2)
    eps = [bad.tasks[0].episodes[0].model_copy(update={"init_state": 70}), *bad.tasks[0].episodes[1:]]
    bad = bad.with_tasks([bad.tasks[0].model_copy(update={"episodes": eps})])
    out, report = aggregated(tmp_path, [ok(tmp_path, 0), ok(tmp_path, 1), ok(tmp_path, 2, bad)])
    (line,) = out.failed_runs
    assert "run2.json" in line and "tasks[0].episodes[0].init_state" in line
    assert report.suites[0].runs_completed == 2


def test_a_missing_and_a_corrupt_result_fail_their_runs_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "run2.json").write_text('{"schema_version": "1.0", "suite": 3}')
    outcomes = [
        ok(tmp_path, 0),
        RunOutcome(
            status=OutcomeStatus.SUCCEEDED,
            kind="eval",
            result_uri=str(tmp_path / "gone.json"),
            suite="libero_spatial",
            run_index=1,
        ),
        RunOutcome(
            status=OutcomeStatus.SUCCEEDED,
            kind="eval",
            result_uri=str(tmp_path / "run2.json"),
            suite="libero_spatial",
            run_index=2,
        ),
    ]
    req = request(tmp_path)
    out = aggregate(
        AggregateInput(request=req, eval_items=[], result_root=str(tmp_path / "root"), outcomes=[outcomes, []]),
        storage=Storage(),
    )
    assert not out.complete
    assert any("gone.json" in line and "does not exist" in line for line in out.failed_runs)
    assert any("run2.json" in line and "suite" in line for line in out.failed_runs)
    assert Path(out.report_uri).exists() and out.report_uri.startswith(str(tmp_path / "root" / "report"))


def test_when_every_run_failed_nothing_is_published(tmp_path: Path) -> None:
    failed = [
        RunOutcome(
            status=OutcomeStatus.FAILED,
            kind="eval",
            suite="libero_spatial",
            run_index=i,
            error="RunFailed",
            state_error=StateError(Error="RunFailed", Cause=None),
        )
        for i in range(3)
    ]
    with pytest.raises(AllRunsFailedError, match="all 3 eval runs"):
        aggregate(
            AggregateInput(request=request(tmp_path), eval_items=[], result_root=str(tmp_path), outcomes=[failed, []]),
            storage=Storage(),
        )


def test_a_lambda_error_cause_is_read_as_its_message() -> None:
    doc = '{"errorMessage": "unknown suite \'x\'", "errorType": "UnknownSuiteError", "stackTrace": []}'
    assert cause_text(StateError(Error="UnknownSuiteError", Cause=doc)) == "unknown suite 'x'"
    assert cause_text(StateError(Error="RunFailed", Cause="plain words")) == "plain words"


def test_the_report_carries_the_requests_origin_and_its_verdict_names_that_lever(tmp_path: Path) -> None:
    from rlinf_bench.contracts import RequestOrigin

    origin = RequestOrigin(command="make demo", levers={"max_steps": "run make demo DEMO_ARGS=--paper"})
    req = request(tmp_path).model_copy(update={"origin": origin, "baselines": ["libero/openvla-oft-rlinf"]})
    short = [
        make_run({0: [1, 0, 1]}, run_index=i).model_copy(
            update={"protocol": make_run({}).protocol.model_copy(update={"max_steps": 130, "overrides": ["max_steps"]})}
        )
        for i in range(3)
    ]
    outcomes = [ok(tmp_path, i, run) for i, run in enumerate(short)]
    out = aggregate(
        AggregateInput(request=req, eval_items=[], result_root=str(tmp_path / "root"), outcomes=[outcomes, []]),
        storage=Storage(),
    )
    report = CheckpointReport.load(out.report_uri)

    assert report.origin == origin
    (v,) = report.verdicts
    assert "for a verdict, run make demo DEMO_ARGS=--paper" in v.reason and "--max-steps" not in v.reason
