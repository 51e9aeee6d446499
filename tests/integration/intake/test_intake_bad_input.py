"""Bad input never crashes a batch and is never lost: it lands in the DLQ with the reason."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from rlinf_aws.router_lambda import build_router, make_handler
from rlinf_bench.errors import ConfigError
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Outcome
from rlinf_local.intake_resources import read_dead_letters
from rlinf_local.sqs_poller import SqsPoller
from tests.integration.intake.conftest import QUIET_S, REGION, Intake, make_intake
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects

ROOT = "runs/exp/checkpoints/global_step_50"
WEIGHTS = f"{ROOT}/actor/model_state_dict/full_weights.pt"


def eventbridge(key: str, bucket: str = "rlinf-checkpoints", detail_type: str = "Object Created") -> str:
    return json.dumps(
        {
            "version": "0",
            "source": "aws.s3",
            "detail-type": detail_type,
            "time": datetime.now(UTC).isoformat(),
            "detail": {"bucket": {"name": bucket}, "object": {"key": key, "size": 10}},
        }
    )


def classic(key: str, event_name: str = "ObjectCreated:Put") -> str:
    record = {
        "eventName": event_name,
        "eventTime": datetime.now(UTC).isoformat(),
        "s3": {"bucket": {"name": "rlinf-checkpoints"}, "object": {"key": key, "size": 10}},
    }
    return json.dumps({"Records": [record]})


BAD: dict[str, tuple[str, str]] = {
    "not json": ("{not json", "not valid JSON"),
    "json list": ("[1, 2]", "not an object"),
    "wrong detail-type": (eventbridge(WEIGHTS, detail_type="Object Deleted"), "detail-type 'Object Deleted'"),
    "classic delete": (classic(WEIGHTS, "ObjectRemoved:Delete"), "is not an ObjectCreated event"),
    "unknown shape": (json.dumps({"hello": "world"}), "not an S3 event"),
    "path traversal": (eventbridge(f"runs/../{WEIGHTS}"), "path traversal"),
    "control character": (eventbridge(f"runs/exp\x07/{WEIGHTS}"), "odd characters"),
    "unparseable step": (
        eventbridge("runs/exp/checkpoints/global_step_abc/actor/model_state_dict/full_weights.pt"),
        "is not a number",
    ),
    "missing key": (
        json.dumps(
            {"source": "aws.s3", "detail-type": "Object Created", "detail": {"bucket": {"name": "rlinf-ckpts"}}}
        ),
        "detail.object.key",
    ),
}


def test_given_each_bad_input_in_one_batch_with_a_good_event_then_bad_ones_reach_the_dlq_and_the_good_one_starts(
    intake: Intake,
) -> None:
    put_objects(intake.s3, intake.stack.bucket, ROOT, fsdp_objects(4, metadata_at="first"), multipart_weights=False)
    intake.poller.drain()  # the real event is deferred (quiet period), still in flight
    intake.clock.advance(60)
    for body, _ in BAD.values():
        intake.send(body)
    intake.poller.release()

    intake.settle()

    assert len(intake.executions()) == 1
    dead = read_dead_letters(intake.sqs, intake.stack.dlq_url)
    assert sorted(d["body"] for d in dead) == sorted(body for body, _ in BAD.values())
    for name, (body, expected) in BAD.items():
        reason = next(d["reason"] for d in dead if d["body"] == body)
        assert expected in reason, f"{name}: {reason}"
    assert not intake.poller.in_flight
    assert intake.sqs.receive_message(QueueUrl=intake.stack.queue_url).get("Messages") is None


def test_given_a_url_encoded_classic_notification_then_the_decoded_checkpoint_is_started(aws: None) -> None:
    intake = make_intake(eventbridge=False)
    root = "runs/my exp+1/checkpoints/global_step_75"
    put_objects(intake.s3, intake.stack.bucket, root, fsdp_objects(4, metadata_at="first"), multipart_weights=False)
    encoded = "runs/my+exp%2B1/checkpoints/global_step_75/actor/model_state_dict/full_weights.pt"
    intake.send(classic(encoded))
    intake.clock.advance(60)

    intake.settle()

    [execution] = intake.executions()
    assert json.loads(execution["input"])["checkpoint"]["uri"] == f"s3://{intake.stack.bucket}/{root}"


def test_given_directory_markers_temp_files_and_foreign_keys_then_they_are_ignored_without_dlq(aws: None) -> None:
    intake = make_intake(eventbridge=False)
    for key in (f"{ROOT}/actor/", f"{ROOT}/actor/model_state_dict/full_weights.pt.tmp", "logs/train.log", "s3-test"):
        intake.send(eventbridge(key))
    intake.send(json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": "rlinf-checkpoints"}))

    intake.settle()

    assert [r.outcome for r in intake.results] == [Outcome.IGNORED] * 5
    assert read_dead_letters(intake.sqs, intake.stack.dlq_url) == []


def test_given_a_checkpoint_that_never_completes_then_after_max_age_it_goes_to_the_dlq_with_the_reason(
    aws: None,
) -> None:
    intake = make_intake(IntakeConfig(quiet_period_s=30, max_age_s=600), eventbridge=True)
    objects = [o for o in fsdp_objects(8, metadata_at="first") if "__3_0" not in o[0]]
    put_objects(intake.s3, intake.stack.bucket, ROOT, objects, multipart_weights=False)
    intake.settle(rounds=3)
    assert intake.poller.in_flight == 1 and intake.executions() == []

    intake.clock.advance(601)
    intake.poller.release()
    intake.poller.drain()

    [dead] = read_dead_letters(intake.sqs, intake.stack.dlq_url)
    assert "still incomplete" in dead["reason"] and "DCP shard ranks missing 3" in dead["reason"]
    assert json.loads(dead["body"])["detail"]["object"]["key"] == WEIGHTS
    assert not intake.poller.in_flight and intake.executions() == []


def test_given_a_deferral_beyond_max_receive_count_then_sqs_redrive_keeps_the_message_in_the_dlq(aws: None) -> None:
    intake = make_intake(eventbridge=True, max_receive_count=2)
    put_objects(intake.s3, intake.stack.bucket, ROOT, fsdp_objects(4, metadata_at="last")[:-1], multipart_weights=False)
    for _ in range(4):
        intake.poller.drain()
        intake.poller.release()

    dead = read_dead_letters(intake.sqs, intake.stack.dlq_url)
    assert len(dead) == 1 and dead[0]["reason"] is None  # moved by SQS itself: the docs explain this case


@pytest.mark.parametrize("broken", ["state_machine_arn", "idempotency_table"])
def test_given_a_missing_state_machine_or_table_then_the_first_batch_fails_with_a_config_error_and_keeps_messages(
    aws: None, broken: str
) -> None:
    intake = make_intake(eventbridge=False)
    bogus: dict[str, Any] = {
        "state_machine_arn": "arn:aws:states:us-east-1:123456789012:stateMachine:nope",
        "idempotency_table": "nope",
    }
    settings = intake.stack.settings(**{broken: bogus[broken]})
    handler = make_handler(lambda: build_router(settings, boto3.client, config=IntakeConfig()))
    poller = SqsPoller(intake.sqs, intake.stack.queue_url, handler, region=REGION)
    intake.send(eventbridge(WEIGHTS))

    with pytest.raises(ConfigError, match="nope"):
        poller.poll_once()

    attrs = intake.sqs.get_queue_attributes(QueueUrl=intake.stack.queue_url, AttributeNames=["All"])["Attributes"]
    assert int(attrs["ApproximateNumberOfMessagesNotVisible"]) == 1  # it will come back, not lost


def test_given_a_bad_record_beside_a_pending_one_when_each_receive_lands_in_a_new_container_then_one_dlq_copy(
    aws: None,
) -> None:
    intake = make_intake(eventbridge=False)
    put_objects(intake.s3, intake.stack.bucket, ROOT, fsdp_objects(4, metadata_at="last")[:-1], multipart_weights=False)
    record = json.loads(classic(WEIGHTS))["Records"][0]
    bad = {**record, "s3": {**record["s3"], "object": {"key": f"runs/../{WEIGHTS}"}}}
    intake.send(json.dumps({"Records": [bad, record]}))
    cfg = IntakeConfig(quiet_period_s=QUIET_S)

    for _ in range(3):  # a fresh handler each time: a cold container with no memory of its letters
        handler = make_handler(lambda: build_router(intake.stack.settings(), boto3.client, config=cfg))
        poller = SqsPoller(intake.sqs, intake.stack.queue_url, handler, region=REGION)
        poller.drain()
        assert poller.in_flight == 1  # the pending record keeps the message coming back
        poller.release()

    [dead] = read_dead_letters(intake.sqs, intake.stack.dlq_url)
    assert "path traversal" in dead["reason"] and dead["letter_id"].endswith("#record-0")
