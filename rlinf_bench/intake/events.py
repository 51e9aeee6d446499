"""Parse what the intake queue receives into object-created events.

Two producers feed the queue: an EventBridge rule on S3 "Object Created" (the default), and classic
S3 bucket notifications (older buckets, or a replay of their logs), whose keys are URL-encoded with
'+' for spaces. Anything else is an InvalidEventError, which the router dead-letters with the reason.

Every way a body can be unreadable is an InvalidEventError here, never another exception: a body that
fails the same way on every delivery must go to the DLQ at first sight, not be retried for hours.
So the decoder refuses what ``json.loads`` alone would accept or crash on: nesting deeper than any S3
event, integers of thousands of digits, ``NaN``/``Infinity``, times no datetime can hold.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn
from urllib.parse import unquote_plus

from rlinf_bench.errors import InvalidEventError

MAX_BODY_CHARS = 256 * 1024  # SQS's own message limit
#: An S3 event is nested 5 deep (EventBridge: event > detail > object > key); 32 leaves room for wrappers.
MAX_DEPTH = 32
#: Longer integers are no size or time (and Python refuses to parse those over 4300 digits anyway).
MAX_INT_DIGITS = 32
MAX_OBJECT_BYTES = 5 * 1024**4  # S3's largest object, 5 TiB
#: S3's bucket naming rules for buckets created since 2018 (3-63 characters, lowercase, digits, '.', '-').
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_IP_ADDRESS = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
#: Prefixes and suffixes S3 reserves (General purpose bucket naming rules): no bucket can have them.
_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


@dataclass(frozen=True)
class ObjectCreated:
    """One S3 object that was created, whichever notification shape announced it."""

    bucket: str
    key: str  # decoded
    size: int | None
    time: datetime | None
    shape: str  # "eventbridge" | "classic"


def _time(value: Any, where: str) -> datetime | None:
    """Event times are ISO strings on AWS; moto writes epoch seconds. Absent gives None; any other form,
    or a time no datetime can hold (1e20, year 10000), is refused: it would fail the same way every time."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidEventError(f"{where} {value!r} is not a time (seconds since 1970 out of range)") from exc
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidEventError(
                f"{where} {value[:64]!r} is not an ISO 8601 time like 2026-11-30T05:00:00Z"
            ) from exc
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise InvalidEventError(f"{where} is a JSON {type(value).__name__}, not a time")


def _size(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidEventError(f"{where}: object size {value!r} is not a non-negative integer")
    if value > MAX_OBJECT_BYTES:
        raise InvalidEventError(f"{where}: object size {value} is larger than S3's largest object (5 TiB)")
    return value


def _bucket(value: Any, where: str) -> str:
    """A bucket name that can only name one bucket: it becomes the s3:// URI of the checkpoint."""
    name = _text(value, where)
    if not _BUCKET.fullmatch(name) or ".." in name or _IP_ADDRESS.fullmatch(name):
        raise InvalidEventError(
            f"{where} {name[:80]!r} is not a valid S3 bucket name "
            "(3-63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit)"
        )
    if name.startswith(_RESERVED_PREFIXES) or name.endswith(_RESERVED_SUFFIXES):
        raise InvalidEventError(
            f"{where} {name!r} is not a valid S3 bucket name (S3 reserves the prefixes "
            f"{', '.join(_RESERVED_PREFIXES)} and the suffixes {', '.join(_RESERVED_SUFFIXES)})"
        )
    return name


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
            bucket=_bucket(bucket, "detail.bucket.name"),
            # EventBridge carries the key as stored (REFERENCE.md section 4); only classic notifications encode it.
            key=_text(obj.get("key"), "detail.object.key"),
            size=_size(obj.get("size"), "detail.object.size"),
            time=_time(doc.get("time"), "time"),
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
                bucket=_bucket(bucket, f"{where}.s3.bucket.name"),
                key=unquote_plus(_text(obj.get("key"), f"{where}.s3.object.key")),
                size=_size(obj.get("size"), f"{where}.s3.object.size"),
                time=_time(rec.get("eventTime"), f"{where}.eventTime"),
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


def _nesting(doc: Any) -> int:
    """How deep arrays and objects nest in a decoded document (walked without recursion)."""
    deepest = 0
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:  # past the limit the answer is known: stop walking
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _refuse_constant(name: str) -> NoReturn:
    raise InvalidEventError(f"message body holds {name}, which is not JSON (an S3 event has finite numbers only)")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise InvalidEventError(f"message body holds an integer of {digits} digits; no S3 event field is that long")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses to inf
        raise InvalidEventError(f"message body holds the number {text[:40]}, too large for a float")
    return value


def decode_body(body: str) -> Any:
    """The JSON document in one message body, decoded within an S3 event's bounds (InvalidEventError otherwise)."""
    if len(body) > MAX_BODY_CHARS:
        raise InvalidEventError(f"message body is {len(body)} characters; an S3 event is far smaller")
    too_deep = f"message body nests deeper than {MAX_DEPTH} levels; an S3 event nests about 5"
    try:
        doc = json.loads(body, parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InvalidEventError(f"message body is not valid JSON ({exc.msg} at character {exc.pos})") from exc
    except RecursionError as exc:  # the C decoder's own guard, at about 1000 levels
        raise InvalidEventError(too_deep) from exc
    except ValueError as exc:  # a decoder limit we did not foresee: still the body's fault
        raise InvalidEventError(f"message body cannot be decoded ({type(exc).__name__}: {str(exc)[:200]})") from exc
    if _nesting(doc) > MAX_DEPTH:
        raise InvalidEventError(too_deep)
    return doc


def parse_body(body: str) -> list[ObjectCreated]:
    """Object-created events in one queue message body (raises InvalidEventError with the reason)."""
    return parse_document(decode_body(body))
