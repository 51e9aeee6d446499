"""The state machine's documents stay under Step Functions' 256 KiB: result files with thousands of invalid
fields and huge Job causes are cut, naming where the whole text is."""

from __future__ import annotations

import json
from pathlib import Path

from rlinf_aws.state_aggregate import aggregate
from rlinf_aws.state_notify_failure import explain_run_failure
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.limits import MESSAGE_CHARS
from rlinf_bench.contracts.workflow import (
    AggregateInput,
    OutcomeStatus,
    RunFailureInput,
    RunOutcome,
    StateError,
    WorkItem,
)
from rlinf_bench.document_store import Storage
from rlinf_bench.reporting.message_limits import ERROR_TEXT_MAX_CHARS, SFN_STATE_OUTPUT_MAX_BYTES, utf8_len
from tests.unit.pipeline.test_aggregate import ok, request


def test_result_files_with_thousands_of_invalid_fields_keep_the_aggregate_output_under_256_kib(
    tmp_path: Path,
) -> None:
    outcomes = [ok(tmp_path, 0)]
    for i in range(1, 3):
        bad = tmp_path / f"bad{i}.json"
        bad.write_text(
            json.dumps({"schema_version": "1.0", "suite": 3, "tasks": [{"bogus": j} for j in range(20_000)]})
        )
        outcomes.append(
            RunOutcome(
                status=OutcomeStatus.SUCCEEDED, kind="eval", result_uri=str(bad), suite="libero_spatial", run_index=i
            )
        )
    probes = [
        RunOutcome(status=OutcomeStatus.FAILED, kind="probe", probe=f"p{i}", error="JobFailed", cause="c" * 30_000)
        for i in range(200)
    ]
    out = aggregate(
        AggregateInput(
            request=request(tmp_path), eval_items=[], result_root=str(tmp_path / "root"), outcomes=[outcomes, probes]
        ),
        storage=Storage(),
    )
    assert utf8_len(out.model_dump_json()) <= SFN_STATE_OUTPUT_MAX_BYTES
    assert all(len(line) <= ERROR_TEXT_MAX_CHARS for line in out.failed_runs)
    assert any(str(tmp_path / "bad1.json") in line and "cut:" in line for line in out.failed_runs)
    assert out.failed_runs[-1].startswith("… and ") and out.report_uri in out.failed_runs[-1]
    # The stored report keeps the head of each bad file's error, up to its limit, and says how long it was.
    stored = CheckpointReport.load(out.report_uri)
    errors = [r.error or "" for s in stored.suites for r in s.runs if r.run_index == 1]
    assert errors and len(errors[0]) == MESSAGE_CHARS and errors[0].endswith("characters]")
    assert "field tasks.0" in errors[0]


def test_a_job_cause_of_32_kib_is_cut_in_the_run_outcome_naming_the_execution_history(tmp_path: Path) -> None:
    item = WorkItem(
        kind="probe",
        job_name="",
        namespace="rlinf",
        image="rlinf-probe:test",
        result_uri=str(tmp_path / "p.json"),
        heartbeat_s=60,
        timeout_s=60,
    )
    error = StateError(Error="ProbeFailed", Cause="x" * 32_768)
    outcome = explain_run_failure(
        RunFailureInput(item=item, error=error),
        submitter_factory=lambda: None,  # type: ignore[arg-type,return-value]
    )
    assert len(outcome.cause) <= ERROR_TEXT_MAX_CHARS and "execution history" in outcome.cause
