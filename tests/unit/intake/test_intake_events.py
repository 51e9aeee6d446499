"""Both S3 notification shapes parse into the same object events; anything else is refused with a reason."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rlinf_bench.errors import InvalidEventError
from rlinf_bench.intake.events import parse_body

EVENTS = Path(__file__).resolve().parents[3] / "events"


def test_given_the_sample_eventbridge_event_then_bucket_key_size_and_time_are_read() -> None:
    [event] = parse_body((EVENTS / "s3-eventbridge-object-created.json").read_text())

    assert event.bucket == "rlinf-checkpoints"
    assert event.key == "runs/openvla-libero10/checkpoints/global_step_100/actor/model_state_dict/full_weights.pt"
    assert event.size == 15_200_000_000 and event.shape == "eventbridge"
    assert event.time == datetime(2026, 11, 30, 5, 0, tzinfo=UTC)


def test_given_the_sample_classic_event_then_the_url_encoded_key_is_decoded() -> None:
    [event] = parse_body((EVENTS / "s3-classic-object-created.json").read_text())
    assert event.key.startswith("runs/openvla libero10/checkpoints/global_step_100/")
    assert event.shape == "classic"


def test_given_moto_style_epoch_times_then_they_are_read_too() -> None:
    body = {
        "source": "aws.s3",
        "detail-type": "Object Created",
        "time": 1796014800.5,
        "detail": {"bucket": {"name": "b"}, "object": {"key": "k", "size": 1}},
    }
    [event] = parse_body(json.dumps(body))
    assert event.time is not None and event.time.year == 2026


def test_given_a_classic_notification_with_two_records_then_both_are_returned() -> None:
    rec = {
        "eventName": "ObjectCreated:CompleteMultipartUpload",
        "s3": {"bucket": {"name": "b"}, "object": {"key": "a%2Bb"}},
    }
    events = parse_body(json.dumps({"Records": [rec, rec]}))
    assert [e.key for e in events] == ["a+b", "a+b"] and events[0].size is None


def test_given_the_s3_test_event_then_there_is_nothing_to_route() -> None:
    assert parse_body(json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent"})) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "not valid JSON"),
        ("null", "JSON NoneType"),
        ('"text"', "JSON str"),
        (json.dumps({"source": "aws.ec2", "detail-type": "Object Created"}), "source 'aws.ec2'"),
        (json.dumps({"source": "aws.s3", "detail-type": "Object Created"}), "no detail object"),
        (
            json.dumps({"source": "aws.s3", "detail-type": "Object Created", "detail": {"object": {"key": "k"}}}),
            "detail.bucket.name",
        ),
        (
            json.dumps(
                {
                    "source": "aws.s3",
                    "detail-type": "Object Created",
                    "detail": {"bucket": {"name": "b"}, "object": {"key": "k", "size": -1}},
                }
            ),
            "size -1",
        ),
        (json.dumps({"Records": []}), "empty or malformed"),
        (json.dumps({"Records": ["x"]}), "not an object"),
        ("x" * 300_000, "far smaller"),
    ],
)
def test_given_malformed_or_foreign_events_then_the_error_says_what_is_wrong(body: str, message: str) -> None:
    with pytest.raises(InvalidEventError, match=message):
        parse_body(body)
