"""Parse what the intake queue receives into object-created events.

Two producers feed the queue: an EventBridge rule on S3 "Object Created" (the default), and classic
S3 bucket notifications (older buckets, or a replay of their logs), whose keys are URL-encoded with
'+' for spaces. Anything else is an InvalidEventError, which the router dead-letters with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote_plus

from rlinf_bench.errors import InvalidEventError

MAX_BODY_CHARS = 256 * 1024  # SQS's own message limit


@dataclass(frozen=True)
class ObjectCreated:
    """One S3 object that was created, whichever notification shape announced it."""

    bucket: str
    key: str  # decoded
    size: int | None
    time: datetime | None
    shape: str  # "eventbridge" | "classic"


def _time(value: Any) -> datetime | None:
    """Event times are ISO strings on AWS; moto writes epoch seconds. Unknown forms give None (not fatal)."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(float(value), UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _size(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidEventError(f"{where}: object size {value!r} is not a non-negative integer")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidEventError(f"{where} is missing or not a string")
    return value


def _obj(value: Any) -> dict[str, Any]:
    """A nested event object, or {} when absent or of the wrong type (the field checks then name it)."""
    return value if isinstance(value, dict) else {}


def _from_eventbridge(doc: dict[str, Any]) -> list[ObjectCreated]:
    if doc.get("source") != "aws.s3" or doc.get("detail-type") != "Object Created":
        raise InvalidEventError(
            f"EventBridge event of source {doc.get('source')!r} / detail-type {doc.get('detail-type')!r}; "
            "the intake rule must only forward aws.s3 'Object Created' events"
        )
    detail = doc.get("detail")
    if not isinstance(detail, dict):
        raise InvalidEventError("EventBridge S3 event has no detail object")
    bucket = _obj(detail.get("bucket")).get("name")
    obj = _obj(detail.get("object"))
    return [
        ObjectCreated(
            bucket=_text(bucket, "detail.bucket.name"),
            # EventBridge carries the key as stored (REFERENCE.md section 4); only classic notifications encode it.
            key=_text(obj.get("key"), "detail.object.key"),
            size=_size(obj.get("size"), "detail.object.size"),
            time=_time(doc.get("time")),
            shape="eventbridge",
        )
    ]


def _from_classic(doc: dict[str, Any]) -> list[ObjectCreated]:
    records = doc["Records"]
    if not isinstance(records, list) or not records:
        raise InvalidEventError("S3 notification has an empty or malformed Records list")
    out = []
    for i, rec in enumerate(records):
        where = f"Records[{i}]"
        if not isinstance(rec, dict):
            raise InvalidEventError(f"{where} is not an object")
        name = rec.get("eventName", "")
        if not isinstance(name, str) or not name.startswith("ObjectCreated:"):
            raise InvalidEventError(f"{where}.eventName {name!r} is not an ObjectCreated event")
        s3 = _obj(rec.get("s3"))
        bucket = _obj(s3.get("bucket")).get("name")
        obj = _obj(s3.get("object"))
        out.append(
            ObjectCreated(
                bucket=_text(bucket, f"{where}.s3.bucket.name"),
                key=unquote_plus(_text(obj.get("key"), f"{where}.s3.object.key")),
                size=_size(obj.get("size"), f"{where}.s3.object.size"),
                time=_time(rec.get("eventTime")),
                shape="classic",
            )
        )
    return out


def parse_document(doc: Any) -> list[ObjectCreated]:
    """Object-created events in an already-decoded event document (either shape).

    Returns [] for S3's ``s3:TestEvent`` (sent once when a notification is configured).
    """
    if not isinstance(doc, dict):
        raise InvalidEventError(f"event is a JSON {type(doc).__name__}, not an object")
    if doc.get("Event") == "s3:TestEvent":
        return []
    if "detail-type" in doc:
        return _from_eventbridge(doc)
    if "Records" in doc:
        return _from_classic(doc)
    raise InvalidEventError(
        "not an S3 event: expected an EventBridge 'Object Created' event or a classic S3 notification (Records)"
    )


def parse_body(body: str) -> list[ObjectCreated]:
    """Object-created events in one queue message body (raises InvalidEventError with the reason)."""
    if len(body) > MAX_BODY_CHARS:
        raise InvalidEventError(f"message body is {len(body)} characters; an S3 event is far smaller")
    try:
        doc = json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidEventError(f"message body is not valid JSON ({exc.msg} at character {exc.pos})") from exc
    return parse_document(doc)
