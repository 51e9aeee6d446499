"""Both S3 notification shapes parse into the same object events; anything else is refused with a reason."""

from __future__ import annotations

import json
import re
import time
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
        "detail": {"bucket": {"name": "bkt"}, "object": {"key": "k", "size": 1}},
    }
    [event] = parse_body(json.dumps(body))
    assert event.time is not None and event.time.year == 2026


def test_given_a_classic_notification_with_two_records_then_both_are_returned() -> None:
    rec = {
        "eventName": "ObjectCreated:CompleteMultipartUpload",
        "s3": {"bucket": {"name": "bkt"}, "object": {"key": "a%2Bb"}},
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
                    "detail": {"bucket": {"name": "bkt"}, "object": {"key": "k", "size": -1}},
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


def _eventbridge(time: object = "2026-11-30T05:00:00Z", size: object = 10, bucket: object = "bkt") -> dict[str, object]:
    return {
        "source": "aws.s3",
        "detail-type": "Object Created",
        "time": time,
        "detail": {"bucket": {"name": bucket}, "object": {"key": "runs/e/x", "size": size}},
    }


#: Bodies that fail the same way on every delivery: each must be an InvalidEventError naming the cause,
#: never an OverflowError, ValueError or RecursionError that the queue would retry for hours.
HOSTILE: dict[str, tuple[str, str]] = {
    "time 1e20": (json.dumps(_eventbridge(time=1e20)), "time 1e+20 is not a time"),
    "time -1e20": (json.dumps(_eventbridge(time=-1e20)), "is not a time"),
    "time NaN": (json.dumps(_eventbridge(time=float("nan"))), "holds NaN, which is not JSON"),
    "time Infinity": (json.dumps(_eventbridge(time=float("inf"))), "holds Infinity"),
    "time 1e999": (json.dumps(_eventbridge()).replace('"2026-11-30T05:00:00Z"', "1e999"), "too large for a float"),
    "time year 10000": (json.dumps(_eventbridge(time="10000-01-01T00:00:00Z")), "is not an ISO 8601 time"),
    "time a list": (json.dumps(_eventbridge(time=[1])), "time is a JSON list"),
    "classic eventTime NaN": (
        '{"Records": [{"eventName": "ObjectCreated:Put", "eventTime": NaN, '
        '"s3": {"bucket": {"name": "bkt"}, "object": {"key": "k"}}}]}',
        "NaN",
    ),
    "size of 5000 digits": (json.dumps(_eventbridge()).replace('"size": 10', '"size": ' + "9" * 5000), "5000 digits"),
    "size over 5 TiB": (json.dumps(_eventbridge(size=6 * 1024**4)), "larger than S3's largest object"),
    "size a string": (json.dumps(_eventbridge(size="10")), "not a non-negative integer"),
    "arrays 100000 deep": ("[" * 100_000 + "]" * 100_000, "nests deeper than 32 levels"),
    "objects 3000 deep": ('{"a": ' * 3000 + "1" + "}" * 3000, "nests deeper than 32 levels"),
    "objects 40 deep": ('{"a": ' * 40 + "1" + "}" * 40, "nests deeper than 32 levels"),
    "bucket with a slash": (json.dumps(_eventbridge(bucket="evil/runs")), "not a valid S3 bucket name"),
    "bucket in capitals": (json.dumps(_eventbridge(bucket="Bad_Bucket!")), "not a valid S3 bucket name"),
    "bucket too short": (json.dumps(_eventbridge(bucket="ab")), "not a valid S3 bucket name"),
    "bucket with '..'": (json.dumps(_eventbridge(bucket="a..b")), "not a valid S3 bucket name"),
    "bucket an IP address": (json.dumps(_eventbridge(bucket="192.168.0.1")), "not a valid S3 bucket name"),
    "bucket with the reserved xn-- prefix": (json.dumps(_eventbridge(bucket="xn--abc")), "S3 reserves the prefixes"),
    "bucket with the reserved -s3alias suffix": (json.dumps(_eventbridge(bucket="b-s3alias")), "and the suffixes"),
    "bucket a number": (json.dumps(_eventbridge(bucket=7)), "detail.bucket.name is missing or not a string"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_given_a_body_that_fails_the_same_way_every_time_then_it_is_an_invalid_event_with_the_reason(
    name: str,
) -> None:
    body, message = HOSTILE[name]
    with pytest.raises(InvalidEventError, match=re.escape(message)):
        parse_body(body)


def test_given_a_body_that_would_make_a_string_regex_backtrack_then_it_is_refused_at_once() -> None:
    # '"' followed by escaped quotes never closes: a regex-based scan would take minutes on it.
    started = time.perf_counter()
    with pytest.raises(InvalidEventError, match="not valid JSON"):
        parse_body('"' + '\\"' * 87_000)
    assert time.perf_counter() - started < 1.0


def test_given_a_valid_bucket_name_with_dots_and_dashes_and_an_absent_time_then_it_parses() -> None:
    [event] = parse_body(json.dumps(_eventbridge(time=None, bucket="my.rlinf-checkpoints-2")))
    assert (event.bucket, event.time) == ("my.rlinf-checkpoints-2", None)
