"""Replay recorded S3 events through the real router against an in-process moto account.

Each event's object is first materialized in the local bucket (key and size), so the completeness
checks see what production saw at that moment; then the event goes into the intake queue and the
poller hands it to the same handler Lambda runs. Deferred records come back the way SQS would
return them. Time is virtual: when the only thing left is waiting for the quiet period, the clock
jumps forward instead of sleeping. The replay ends when only checkpoints that can never complete
remain; those are reported as ``pending``.

No line stops the replay: a line longer than :data:`MAX_LINE_BYTES` (read in bounded chunks: only its
length is kept), a line that is not UTF-8, or whose event cannot be put in the local bucket, is dead here
with its reason and line number; every other line goes to the queue, where the router dead-letters what it
cannot read (invalid JSON, nesting, out-of-range fields), as it would in AWS.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

from rlinf_aws.router_lambda import build_router, make_handler
from rlinf_bench.checkpoints.keys import check_key_text
from rlinf_bench.errors import ConfigError, InvalidEventError
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.events import MAX_BODY_CHARS, decode_body, parse_body
from rlinf_bench.intake.router import Outcome, RecordResult
from rlinf_local.intake_resources import create_bucket, create_intake_stack, read_dead_letters
from rlinf_local.sqs_poller import SqsPoller

REGION = "us-east-1"
#: Bodies are capped: completeness only distinguishes empty from non-empty files, and a recorded
#: 15 GB full_weights.pt must not be materialized in memory.
MATERIALIZE_CAP_BYTES = 64 * 1024
MAX_SETTLE_ROUNDS = 1000
#: The longest line replayed: an intake message's limit (no S3 event comes near it). A longer line is dead
#: with its number and length; it is never held in memory whole.
MAX_LINE_BYTES = MAX_BODY_CHARS
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class OverlongLine:
    """A line over :data:`MAX_LINE_BYTES`: only its length is kept."""

    size: int


def read_lines(stream: BinaryIO, *, max_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | OverlongLine]:
    """The stream's lines (split on ``\n`` only, the line end dropped), each at most ``max_bytes`` long; a
    longer one is an :class:`OverlongLine`. Memory stays within one chunk plus one bounded line."""
    pending = bytearray()
    size = 0
    while chunk := stream.read(_READ_CHUNK):
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            size += len(piece)
            if size <= max_bytes:
                pending += piece
            else:
                pending.clear()
            if end < 0:
                break
            yield bytes(pending) if size <= max_bytes else OverlongLine(size)
            pending.clear()
            size, start = 0, end + 1
    if size:
        yield bytes(pending) if size <= max_bytes else OverlongLine(size)


class VirtualClock:
    """Wall time plus an offset that jumps over quiet periods."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


#: What became of each object record read, in the order the summary prints them.
FINAL_OUTCOMES = ("started", "duplicate", "pending", "dead", "ignored")


@dataclass
class ReplayReport:
    executions: list[dict[str, Any]] = field(default_factory=list)
    #: {"line", "event", "reason"} per dead record, by line number (None: a line SQS's redrive moved
    #: whose message could not be traced back).
    dead_letters: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0
    #: Object records in the events (a classic S3 notification can carry several; an unreadable line is one).
    records: int = 0
    #: Final outcome of every record; the values add up to ``records``.
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FINAL_OUTCOMES, 0))
    #: Why records were ignored (outside the roots, directory markers, not a layout's last file...).
    ignored_reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "executions": self.executions,
            "dead_letters": self.dead_letters,
            "pending": self.pending,
            "summary": {
                "events": self.events,
                "records": self.records,
                **self.counts,
                "ignored_reasons": self.ignored_reasons,
            },
        }


class _Tally:
    """Follows every record from its first decision to its last, so the summary accounts for each one."""

    def __init__(self) -> None:
        self.final: list[str | None] = []  # None: deferred, not decided yet
        self.waiting: dict[str, list[int]] = {}
        self.ignored: Counter[str] = Counter()

    def dead_line(self) -> None:
        """A line refused before it reached the queue: one record, dead."""
        self.final.append("dead")

    def first(self, results: list[RecordResult]) -> None:
        if not results:  # the message failed before the router decided: it stays undecided
            self.final.append(None)
        for r in results:
            if r.outcome is Outcome.DEFERRED:
                self.waiting.setdefault(r.key, []).append(len(self.final))
                self.final.append(None)
            else:
                self.final.append(self._name(r))

    def later(self, results: list[RecordResult]) -> None:
        """Redelivered records: a decision other than deferred settles one waiting record of that key."""
        for r in results:
            slots = self.waiting.get(r.key)
            if r.outcome is not Outcome.DEFERRED and slots:
                self.final[slots.pop(0)] = self._name(r)

    def _name(self, r: RecordResult) -> str:
        if r.outcome in (Outcome.IGNORED, Outcome.FILTERED):
            self.ignored[r.reason] += 1
            return "ignored"
        return {Outcome.DEAD_LETTERED: "dead"}.get(r.outcome, r.outcome.value)

    def fill(self, report: ReplayReport, redriven: int) -> None:
        """Undecided records are pending, except those SQS itself moved to the DLQ (maxReceiveCount)."""
        counts = dict.fromkeys(FINAL_OUTCOMES, 0)
        for outcome in self.final:
            if outcome is None and redriven > 0:
                outcome, redriven = "dead", redriven - 1
            counts[outcome or "pending"] += 1
        report.records = len(self.final)
        report.counts = counts
        report.ignored_reasons = dict(self.ignored.most_common())


class _Recorder:
    """Keeps the router's results of the current delivery round."""

    def __init__(self) -> None:
        self.round: list[RecordResult] = []

    def __call__(self, result: RecordResult) -> None:
        self.round.append(result)

    def take(self) -> list[RecordResult]:
        out, self.round = self.round, []
        return out


def _materialize(s3: Any, buckets: set[str], body: str) -> None:
    """Put the object(s) an event announces into the local bucket; unusable events are left to the router.

    Raises ConfigError when moto refuses a bucket or an object the router would accept (the line is dead).
    """
    try:
        events = parse_body(body)  # the router's own bounded decoder: deep nesting cannot overflow here
    except InvalidEventError:
        return
    for event in events:
        try:
            check_key_text(event.key)
        except InvalidEventError:
            continue  # the router dead-letters it; S3 would store it, but nothing may read it back
        if event.bucket not in buckets:
            try:
                create_bucket(s3, event.bucket, REGION, eventbridge=False)
            except Exception as exc:  # botocore's ClientError, or moto's own refusal (an IDNA error for xn--)
                raise ConfigError(
                    f"event for bucket {event.bucket!r}: the bucket cannot be created locally "
                    f"({type(exc).__name__}: {str(exc)[:300]}); recorded S3 events always name valid buckets"
                ) from exc
            buckets.add(event.bucket)
        size = 0 if event.key.endswith("/") else event.size if event.size is not None else 1
        try:
            s3.put_object(Bucket=event.bucket, Key=event.key, Body=b"\0" * min(size, MATERIALIZE_CAP_BYTES))
        except Exception as exc:  # e.g. a key over S3's 1024 bytes: S3 never announced such an object
            raise ConfigError(
                f"object {event.key[:200]!r} cannot be stored locally ({type(exc).__name__}: {str(exc)[:300]}); "
                "S3 never announces an object it could not store"
            ) from exc


def _line_text(raw: str | bytes, number: int) -> str:
    """One line as text, without its line end; ConfigError naming the line and byte when it is not UTF-8."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start} of line {number}); "
                "S3 events are JSON in UTF-8"
            ) from exc
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no queue can carry it
        raise ConfigError(
            f"not UTF-8 text (a lone surrogate U+{ord(raw[exc.start]):04X} at offset {exc.start} of line {number}); "
            "S3 events are JSON in UTF-8"
        ) from exc
    return raw.rstrip("\r\n")


def _settle(
    poller: SqsPoller, recorder: _Recorder, clock: VirtualClock, quiet_s: float, tally: _Tally
) -> list[RecordResult]:
    """Redeliver deferred records until they start or can only wait for files that never come."""
    deferred: list[RecordResult] = []
    for _ in range(MAX_SETTLE_ROUNDS):
        if not poller.in_flight:
            return []
        poller.release()
        poller.drain()
        results = recorder.take()
        tally.later(results)
        if not results:
            return []  # the records failed before the router decided (an AWS error): nothing to report as pending
        deferred = [r for r in results if r.outcome is Outcome.DEFERRED]
        if any(r.waiting_for_quiet for r in deferred):
            clock.advance(quiet_s + 1)
            continue
        if not deferred:
            continue
        if not any(r.outcome in (Outcome.STARTED, Outcome.DUPLICATE) for r in results):
            return deferred  # nothing moved: these wait for files that are not in the recording
    return deferred


@dataclass
class _Feed:
    """Puts the lines on the intake queue one by one; a line it cannot deliver is dead here, with its number."""

    report: ReplayReport
    tally: _Tally
    recorder: _Recorder
    poller: SqsPoller
    s3: Any
    buckets: set[str]
    line_of: dict[str, int] = field(default_factory=dict)  # SQS message id -> line number
    refused: list[dict[str, Any]] = field(default_factory=list)

    def line(self, number: int, raw: str | bytes | OverlongLine) -> None:
        if isinstance(raw, OverlongLine):
            self.report.events += 1
            self.refused.append({"line": number, "event": f"({raw.size} bytes, not kept)", "reason": _overlong(raw)})
            self.tally.dead_line()
            return
        if not raw.strip():
            return
        size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "replace"))
        if size > MAX_LINE_BYTES:  # lines handed in directly (not through read_lines) are bounded too
            self.line(number, OverlongLine(size))
            return
        self.report.events += 1
        try:
            body = _line_text(raw, number)
            _materialize(self.s3, self.buckets, body)
            # A line the router cannot read is delivered as is: it dead-letters it with the reason.
            sent = self.poller.sqs.send_message(QueueUrl=self.poller.queue_url, MessageBody=body)
        except ConfigError as exc:
            self.refused.append({"line": number, "event": _shown(raw), "reason": str(exc)})
            self.tally.dead_line()
            return
        self.line_of[sent["MessageId"]] = number
        self.poller.drain()
        self.tally.first(self.recorder.take())


def _overlong(line: OverlongLine) -> str:
    return (
        f"the line is {line.size} bytes long, over the {MAX_LINE_BYTES}-byte bound of an intake message "
        "(no S3 event is that long); not replayed"
    )


def replay_events(lines: Iterable[str | bytes | OverlongLine], *, config: IntakeConfig | None = None) -> ReplayReport:
    """Run every line (one S3 event, EventBridge or classic shape) through the router in moto.

    ``lines`` are the file's lines in order (bytes are decoded per line, so one bad byte costs one line;
    :func:`read_lines` gives them from a file with their length bounded). Never raises for a line: each one
    the replay cannot deliver is a dead letter naming its line number.
    """
    try:
        import boto3
        from moto import mock_aws
    except ImportError as exc:  # moto is a development dependency
        raise ConfigError(
            f"replay-events needs moto and boto3 ({exc}); install with pip install 'rlinf-bench[dev]'"
        ) from exc

    cfg = config or IntakeConfig()
    session = boto3.session.Session(aws_access_key_id="replay", aws_secret_access_key="replay", region_name=REGION)
    report = ReplayReport()
    with mock_aws():
        stack = create_intake_stack(session.client, region=REGION, eventbridge=False)
        clock, recorder, tally = VirtualClock(), _Recorder(), _Tally()
        handler = make_handler(
            lambda: build_router(stack.settings(), session.client, clock=clock, observer=recorder, config=cfg)
        )
        sqs = session.client("sqs")
        poller = SqsPoller(sqs, stack.queue_url, handler, region=REGION)
        feed = _Feed(report, tally, recorder, poller, session.client("s3"), {stack.bucket})
        for number, raw in enumerate(lines, start=1):
            feed.line(number, raw)
        pending = _settle(poller, recorder, clock, cfg.quiet_period_s, tally)
        report.pending = _pending(pending)
        report.executions = _executions(session.client("stepfunctions"), stack.state_machine_arn)
        report.dead_letters = sorted(
            feed.refused + [_dead_letter(d, feed.line_of) for d in read_dead_letters(sqs, stack.dlq_url)],
            key=lambda d: (d["line"] is None, d["line"] or 0),
        )
        tally.fill(report, redriven=sum(1 for d in report.dead_letters if d["reason"].startswith("moved by SQS")))
    return report


def _dead_letter(letter: dict[str, Any], line_of: dict[str, int]) -> dict[str, Any]:
    """A DLQ message as {"line", "event", "reason"}; the letter id (or SQS's own id) names the line."""
    message_id = (letter["letter_id"] or letter["message_id"]).split("#", 1)[0]
    return {
        "line": line_of.get(message_id),
        "event": _decoded(letter["body"]),
        "reason": letter["reason"] or "moved by SQS redrive (maxReceiveCount)",
    }


def _shown(raw: str | bytes) -> str:
    """A refused line as the report shows it: text, with undecodable bytes escaped, cut to 1000 characters."""
    text = (raw if isinstance(raw, bytes) else raw.encode("utf-8", "backslashreplace")).decode(
        "utf-8", "backslashreplace"
    )
    return text.rstrip("\r\n")[:1000]


def _decoded(body: str) -> Any:
    """The event a dead letter holds, decoded within the router's bounds; otherwise its text."""
    try:
        return decode_body(body)
    except InvalidEventError:
        return body


def _pending(deferred: list[RecordResult]) -> list[dict[str, Any]]:
    by_root: dict[str, dict[str, Any]] = {}
    for r in deferred:
        if r.checkpoint is not None:
            by_root[r.checkpoint.uri] = {"checkpoint": r.checkpoint.model_dump(mode="json"), "reason": r.reason}
    return list(by_root.values())


def _executions(sfn: Any, state_machine_arn: str) -> list[dict[str, Any]]:
    out = []
    for item in sfn.list_executions(stateMachineArn=state_machine_arn)["executions"]:
        described = sfn.describe_execution(executionArn=item["executionArn"])
        request = json.loads(described["input"])
        out.append({"name": described["name"], "checkpoint": request["checkpoint"], "input": request})
    return sorted(out, key=lambda e: (e["checkpoint"]["uri"], e["name"]))
