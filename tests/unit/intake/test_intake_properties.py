"""Generated events thrown at the real router: every record ends decided or pending, nothing unexpected raises,
and a message however often received is dead-lettered at most once per record.

The router is built as in test_intake_router.py, with in-memory collaborators: a bucket that holds one complete
and one incomplete checkpoint, a bucket that does not exist (the lister refuses it as the S3 object store does) and one whose
listing times out (a transient error, retried until ``max_age_s``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from rlinf_bench.checkpoints.listing import StoredObject
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.errors import InvalidEventError, StorageLocationError
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.events import parse_body
from rlinf_bench.intake.router import Outcome, RecordResult, Router
from tests.synthetic_checkpoints import fsdp_objects

NOW = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
MAX_AGE_S = 3600.0
GOOD, MISSING, FLAKY = "good-bucket", "missing-bucket", "flaky-bucket"
COMPLETE = "runs/exp/checkpoints/global_step_10"
INCOMPLETE = "runs/exp/checkpoints/global_step_20"
DECIDED = {Outcome.STARTED, Outcome.DUPLICATE, Outcome.IGNORED, Outcome.FILTERED, Outcome.DEAD_LETTERED}


class ListingTimeoutError(Exception):
    """What a throttled or timed-out S3 listing raises: transient, so the router lets it propagate."""


class Lister:
    def __init__(self) -> None:
        stored = NOW - timedelta(hours=1)  # past the quiet period
        objects = fsdp_objects(2)
        self.roots = {
            f"s3://{GOOD}/{COMPLETE}": [StoredObject(rel, size, stored) for rel, size in objects],
            f"s3://{GOOD}/{INCOMPLETE}": [StoredObject(rel, size, stored) for rel, size in objects[:-2]],
        }

    def list(self, root_uri: str) -> list[StoredObject]:
        if root_uri.startswith(f"s3://{MISSING}/"):
            raise StorageLocationError(f"NoSuchBucket: s3://{MISSING}/ cannot be listed")
        if root_uri.startswith(f"s3://{FLAKY}/"):
            raise ListingTimeoutError("listing timed out")
        return list(self.roots.get(root_uri, []))


class Executions:
    def __init__(self) -> None:
        self.started: Counter[str] = Counter()

    def start_once(self, ref: CheckpointRef, request: EvalRequest) -> dict[str, Any]:
        self.started[request.request_id] += 1
        return {"name": request.request_id, "already_started": self.started[request.request_id] > 1}


@dataclass
class Dlq:
    letters: list[tuple[str, str, str]] = field(default_factory=list)  # (letter id, body, reason)

    def send(self, body: str, reason: str, *, letter_id: str) -> None:
        self.letters.append((letter_id, body, reason))


# --- generated bodies -------------------------------------------------------------------------------------

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def mostly(good: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Valid three times in four."""
    return st.one_of(good, good, good, odd)


@dataclass(frozen=True)
class Field:
    """The values of one event field: valid ones, and hostile ones (wrong type, out of range, huge, empty)."""

    good: st.SearchStrategy[Any]
    odd: st.SearchStrategy[Any]

    def draw(self, draw: st.DrawFn, valid: bool) -> Any:
        return draw(self.good if valid else mostly(self.good, self.odd))


RELATIVES = (
    "actor/model_state_dict/full_weights.pt",  # a layout's last file: lists the checkpoint
    "actor/dcp_checkpoint/.metadata",  # the other layout's last file
    "actor/dcp_checkpoint/__0_0.distcp",  # filtered
    "actor/",  # a directory marker: ignored
    "actor/model_state_dict/full_weights.pt.tmp",  # a temp file: ignored
)
BUCKET = Field(
    st.sampled_from([GOOD, FLAKY, GOOD, MISSING]),
    st.one_of(st.sampled_from(["xn--abc", "b-s3alias", "Bad_Bucket", "a..b", "ab", "10.0.0.1", ""]), json_value),
)
KEY = Field(
    st.builds(
        lambda root, rel: f"{root}/{rel}",
        st.sampled_from([COMPLETE, INCOMPLETE, INCOMPLETE, "runs/other/checkpoints/global_step_30", "logs/x"]),
        st.sampled_from(RELATIVES[:2] * 3 + RELATIVES[2:]),
    ),
    st.one_of(
        st.sampled_from(["runs/x/checkpoints/global_step_abc/actor/dcp_checkpoint/.metadata", "runs/../etc/passwd"]),
        st.text(max_size=40),
        json_value,
    ),
)
SIZE = Field(
    st.one_of(st.none(), st.integers(min_value=0, max_value=5 * 1024**4)),
    st.one_of(st.integers(min_value=-5, max_value=2**70), st.floats(), st.text(max_size=5), json_value),
)
TIME = Field(
    st.one_of(
        st.none(),
        st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)).map(
            lambda d: d.isoformat()
        ),
    ),
    st.one_of(
        st.floats(),  # NaN, infinities and 1e300 among them
        st.integers(min_value=-(10**30), max_value=10**30),
        st.text(max_size=30),
        st.sampled_from(["10000-01-01T00:00:00Z", "2026-13-01T00:00:00Z"]),
        json_value,
    ),
)
SOURCE = Field(st.just("aws.s3"), st.sampled_from(["aws.ec2", ""]))
DETAIL_TYPE = Field(st.just("Object Created"), st.sampled_from(["Object Deleted", "object created"]))
EVENT_NAME = Field(
    st.sampled_from(["ObjectCreated:Put", "ObjectCreated:CompleteMultipartUpload"]),
    st.sampled_from(["ObjectRemoved:Delete", ""]),
)


@st.composite
def eventbridge(draw: st.DrawFn, valid: bool = False) -> Any:
    obj = {"key": KEY.draw(draw, valid), "size": SIZE.draw(draw, valid)}
    return {
        "version": "0",
        "source": SOURCE.draw(draw, valid),
        "detail-type": DETAIL_TYPE.draw(draw, valid),
        "time": TIME.draw(draw, valid),
        "detail": {"bucket": {"name": BUCKET.draw(draw, valid)}, "object": obj},
    }


@st.composite
def classic_record(draw: st.DrawFn, valid: bool = False) -> Any:
    obj = {"key": KEY.draw(draw, valid), "size": SIZE.draw(draw, valid)}
    return {
        "eventName": EVENT_NAME.draw(draw, valid),
        "eventTime": TIME.draw(draw, valid),
        "s3": {"bucket": {"name": BUCKET.draw(draw, valid)}, "object": obj},
    }


def _mutate(doc: Any, path: list[str | int], value: Any, delete: bool) -> Any:
    """``doc`` with the value at the first reachable part of ``path`` replaced (or deleted)."""
    node = doc
    for step in path[:-1]:
        child = node.get(step) if isinstance(node, dict) and isinstance(step, str) else None
        if not isinstance(child, dict | list):
            break
        node = child
    if isinstance(node, dict) and node:
        target = path[-1] if path[-1] in node else sorted(node)[0]
        if delete:
            del node[target]
        else:
            node[target] = value
    return doc


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = draw(
        st.one_of(
            eventbridge(), st.builds(lambda r: {"Records": r}, st.lists(classic_record(), min_size=1, max_size=3))
        )
    )
    path = draw(
        st.sampled_from(
            [["detail", "object", "key"], ["detail", "bucket"], ["detail"], ["time"], ["Records"], ["source"]]
        )
    )
    return _mutate(doc, list(path), draw(json_value), draw(st.booleans()))


def _dumps(doc: Any) -> str:
    return json.dumps(doc, allow_nan=True)  # NaN/Infinity tokens on purpose: the router must refuse them


events = st.one_of(
    eventbridge(valid=True).map(_dumps),
    eventbridge().map(_dumps),
    # A classic notification of several records: bad ones beside pending ones (one DLQ copy each, however
    # often the message comes back for its pending record).
    st.lists(st.one_of(classic_record(valid=True), classic_record()), min_size=1, max_size=4).map(
        lambda r: _dumps({"Records": r})
    ),
    mutated().map(_dumps),
)
garbage = st.one_of(
    json_value.map(_dumps),
    st.text(max_size=60),
    st.binary(max_size=60).map(lambda b: b.decode("utf-8", "replace")),
    st.integers(min_value=30, max_value=3000).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=30, max_value=1500).map(lambda n: '{"a": ' * n + "1" + "}" * n),
    st.integers(min_value=33, max_value=3000).map(
        lambda n: '{"detail-type": "Object Created", "size": ' + "9" * n + "}"
    ),
    st.just('{"Service": "Amazon S3", "Event": "s3:TestEvent"}'),
)
bodies = mostly(events, garbage)


# --- the property -----------------------------------------------------------------------------------------


def _deliver(router: Router, body: str, message_id: str, first_seen: datetime) -> list[RecordResult] | None:
    """One receive of a message, as the Lambda's record handler sees it; None: a transient error (retried)."""
    try:
        return router.route(body, first_seen=first_seen, message_id=message_id)
    except ListingTimeoutError:
        event("transient error: retried")
        return None


def _check_decisions(body: str, results: list[RecordResult]) -> None:
    assert results, "every message gets at least one decision"
    event(" + ".join(sorted({r.outcome.value for r in results})))  # shown by --hypothesis-show-statistics
    for r in results:
        if r.outcome in (Outcome.DEAD_LETTERED, Outcome.IGNORED, Outcome.FILTERED, Outcome.DEFERRED):
            assert r.reason.strip(), f"{r.outcome} without a reason"
        if r.outcome in (Outcome.STARTED, Outcome.DUPLICATE):
            assert r.checkpoint is not None and r.execution_name
    try:
        parse_body(body)
    except InvalidEventError as exc:  # deterministic: dead at first sight, never deferred or retried
        assert [(r.outcome, r.reason) for r in results] == [(Outcome.DEAD_LETTERED, str(exc))]


#: One bad record beside one that waits for files: received three times, its bad record has one DLQ copy.
BAD_BESIDE_PENDING = json.dumps(
    {
        "Records": [
            {"eventName": "ObjectCreated:Put", "s3": {"bucket": {"name": GOOD}, "object": {"key": key}}}
            for key in ("runs/../etc/passwd", f"{INCOMPLETE}/actor/model_state_dict/full_weights.pt")
        ]
    }
)


@settings(max_examples=200, derandomize=True, deadline=None, database=None)  # the same 200 cases every run
@example(batches=[[BAD_BESIDE_PENDING]], twice=True)
@given(batches=st.lists(st.lists(bodies, min_size=1, max_size=4), min_size=1, max_size=2), twice=st.booleans())
def test_given_generated_batches_then_every_record_ends_decided_or_pending_and_is_dead_lettered_once(
    batches: list[list[str]], twice: bool
) -> None:
    dlq, executions = Dlq(), Executions()
    router = Router(
        config=IntakeConfig(quiet_period_s=60, max_age_s=MAX_AGE_S),
        lister=Lister(),
        start_once=executions.start_once,
        dead_letters=dlq,
        clock=lambda: NOW,
    )
    messages = {f"m{b}-{i}": body for b, batch in enumerate(batches) for i, body in enumerate(batch)}
    expected_letters: dict[str, set[str]] = {m: set() for m in messages}
    retry: list[str] = []
    seen: list[RecordResult] = []
    for receive in range(2 if twice else 1):  # the same batches received again: SQS's at-least-once delivery
        for message_id, body in messages.items():
            results = _deliver(router, body, message_id, NOW)
            if receive == 0 and (results is None or any(r.outcome is Outcome.DEFERRED for r in results)):
                retry.append(message_id)
            if results is not None:
                _check_decisions(body, results)
                seen += results
                expected_letters[message_id] |= _letter_ids(message_id, results)
    for message_id in retry:  # redelivered past max_age_s: pending and retried records are now decided
        results = _deliver(router, messages[message_id], message_id, NOW - timedelta(seconds=MAX_AGE_S + 1))
        assert results is not None and {r.outcome for r in results} <= DECIDED
        _check_decisions(messages[message_id], results)
        seen += results
        expected_letters[message_id] |= _letter_ids(message_id, results)

    sent = Counter(letter_id for letter_id, _, _ in dlq.letters)
    assert all(n == 1 for n in sent.values()), f"a record dead-lettered more than once: {sent}"
    assert set(sent) == set().union(*expected_letters.values())
    for letter_id, body, reason in dlq.letters:
        assert body == messages[letter_id.split("#")[0]] and reason.strip()
    started = Counter(r.execution_name for r in seen if r.outcome is Outcome.STARTED)
    assert all(n == 1 for n in started.values()), f"a checkpoint started more than once: {started}"


def _letter_ids(message_id: str, results: list[RecordResult]) -> set[str]:
    """The letter ids the dead records of one delivery were sent under: the body's when it was unreadable
    (no key), else the record's index."""
    return {
        f"{message_id}#record-{i}" if r.key else f"{message_id}#body"
        for i, r in enumerate(results)
        if r.outcome is Outcome.DEAD_LETTERED
    }
