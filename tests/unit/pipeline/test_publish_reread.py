"""The Publish state re-reads the report the Aggregate state stored, even when a probe wrote Infinity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlinf_aws.state_aggregate import aggregate
from rlinf_aws.state_publish import publish
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.workflow import AggregateInput, OutcomeStatus, RunOutcome
from rlinf_bench.document_store import Storage
from tests.unit.pipeline.test_aggregate import ok, request


class RecordingSns:
    def __init__(self) -> None:
        self.published: list[dict[str, Any]] = []

    def publish(self, **kwargs: Any) -> dict[str, str]:
        self.published.append(kwargs)
        return {"MessageId": f"m{len(self.published)}"}


def test_a_probe_value_of_infinity_fails_the_probe_by_field_and_the_report_reads_back(tmp_path: Path) -> None:
    probe_file = tmp_path / "probe.json"
    probe_file.write_text(
        '{"schema_version": "1.0", "probe": "storage", "verdict": "pass", '
        '"values": {"read_gbps": {"value": Infinity, "unit": "GB/s"}}}'
    )
    probe = RunOutcome(status=OutcomeStatus.SUCCEEDED, kind="probe", probe="storage", result_uri=str(probe_file))
    runs = [ok(tmp_path, i) for i in range(3)]
    out = aggregate(
        AggregateInput(
            request=request(tmp_path), eval_items=[], result_root=str(tmp_path / "root"), outcomes=[runs, [probe]]
        ),
        storage=Storage(),
    )
    assert any("probe.json" in line and "values.read_gbps.value: Infinity" in line for line in out.failed_runs)

    sns = RecordingSns()
    result = publish(out, storage=Storage(), sns=sns, topic_arn="arn:aws:sns:us-east-1:123:results")
    assert result.message_id == "m1" and result.report_uri == out.report_uri
    stored = CheckpointReport.read(out.report_uri, storage=Storage())
    assert CheckpointReport.from_json(stored.to_json()) == stored  # the stored report round-trips
    assert [p.verdict.value for p in stored.probes] == ["fail"]
    email = json.loads(sns.published[0]["Message"])["email"]
    assert "values.read_gbps.value: Infinity" in email
