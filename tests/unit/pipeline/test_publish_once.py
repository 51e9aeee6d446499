"""The summary goes out once per checkpoint and content: a repeated aggregation of the same runs sends nothing
(the embedded default's resumed or repeated demo), a summary that says something new is sent."""

from __future__ import annotations

import json
from pathlib import Path

from rlinf_aws.sent_summaries import SentSummaries
from rlinf_aws.state_aggregate import aggregate
from rlinf_aws.state_publish import publish
from rlinf_bench.contracts.workflow import AggregateInput, AggregateResult, OutcomeStatus, RunOutcome
from rlinf_bench.document_store import Storage
from tests.unit.pipeline.test_aggregate import ok, request
from tests.unit.pipeline.test_publish_reread import RecordingSns

TOPIC = "arn:aws:sns:us-east-1:123:results"


def aggregated(tmp_path: Path, write_mb_s: float) -> AggregateResult:
    """Three good runs and a storage probe that measured ``write_mb_s`` (target > 500 MB/s)."""
    verdict = "pass" if write_mb_s > 500 else "fail"
    probe_file = tmp_path / "storage.json"
    probe_file.write_text(
        json.dumps(
            {
                "schema_version": "1.0",
                "probe": "storage",
                "verdict": verdict,
                "values": {"write_mb_s": {"value": write_mb_s, "unit": "MB/s"}},
                "target": {"metric": "write_mb_s", "op": ">", "value": 500, "unit": "MB/s"},
            }
        )
    )
    probe = RunOutcome(status=OutcomeStatus.SUCCEEDED, kind="probe", probe="storage", result_uri=str(probe_file))
    runs = [ok(tmp_path, i) for i in range(3)]
    return aggregate(
        AggregateInput(
            request=request(tmp_path), eval_items=[], result_root=str(tmp_path / "root"), outcomes=[runs, [probe]]
        ),
        storage=Storage(),
    )


def test_given_a_summary_sent_then_the_same_runs_published_again_send_nothing_and_say_when_it_went(
    tmp_path: Path,
) -> None:
    sns, sent = RecordingSns(), SentSummaries(tmp_path / "outbox" / "sent.json")
    first = publish(aggregated(tmp_path, 53.6), storage=Storage(), sns=sns, topic_arn=TOPIC, sent=sent)

    # WHEN the run is resumed: the same runs aggregated again, the probe measuring again (still below target)
    again = publish(aggregated(tmp_path, 163.0), storage=Storage(), sns=sns, topic_arn=TOPIC, sent=sent)

    assert len(sns.published) == 1 and first.message_id == "m1" and not first.already_sent
    assert again.message_id == "" and again.already_sent.startswith(f'"{first.email_subject}" was sent at ')


def test_given_a_summary_sent_then_one_that_says_something_new_is_sent(tmp_path: Path) -> None:
    sns, sent = RecordingSns(), SentSummaries(tmp_path / "sent.json")
    publish(aggregated(tmp_path, 53.6), storage=Storage(), sns=sns, topic_arn=TOPIC, sent=sent)

    # WHEN the storage check now passes
    now = publish(aggregated(tmp_path, 900.0), storage=Storage(), sns=sns, topic_arn=TOPIC, sent=sent)

    assert len(sns.published) == 2 and now.message_id == "m2" and not now.already_sent


def test_given_no_log_then_every_summary_is_sent_as_on_a_deployed_stack(tmp_path: Path) -> None:
    sns = RecordingSns()
    for _ in range(2):
        publish(aggregated(tmp_path, 53.6), storage=Storage(), sns=sns, topic_arn=TOPIC)

    assert len(sns.published) == 2
