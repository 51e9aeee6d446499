"""The aggregate state on local storage: unusable result files fail their run by name; all-failed stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_aws.state_aggregate import AllRunsFailedError, aggregate
from rlinf_aws.state_notify_failure import cause_text
from rlinf_bench.contracts import CheckpointRef, EvalRequest, SuiteSelection
from rlinf_bench.contracts.workflow import AggregateInput, OutcomeStatus, RunOutcome, StateError
from rlinf_bench.document_store import Storage
from tests.unit.stats.runfactory import CKPT, make_run


def request(tmp_path: Path) -> EvalRequest:
    return EvalRequest(
        checkpoint=CheckpointRef.model_validate(CKPT.model_dump()),
        suites=[SuiteSelection(name="libero_spatial", tasks=[0])],
        output_prefix=str(tmp_path),
        baselines=[],
    )


def ok(tmp_path: Path, i: int) -> RunOutcome:
    path = tmp_path / f"run{i}.json"
    make_run({0: [1, 0, 1]}, run_index=i).save(path)
    return RunOutcome(
        status=OutcomeStatus.SUCCEEDED, kind="eval", result_uri=str(path), suite="libero_spatial", run_index=i
    )


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
        AggregateInput(request=req, result_root=str(tmp_path / "root"), outcomes=[outcomes, []]), storage=Storage()
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
            AggregateInput(request=request(tmp_path), result_root=str(tmp_path), outcomes=[failed, []]),
            storage=Storage(),
        )


def test_a_lambda_error_cause_is_read_as_its_message() -> None:
    doc = '{"errorMessage": "unknown suite \'x\'", "errorType": "UnknownSuiteError", "stackTrace": []}'
    assert cause_text(StateError(Error="UnknownSuiteError", Cause=doc)) == "unknown suite 'x'"
    assert cause_text(StateError(Error="RunFailed", Cause="plain words")) == "plain words"
