"""The checkpoint router's core: one queue message in, one decision per object event out.

Decisions, cheapest first:
- dead-lettered: malformed JSON, a wrong event type, an unsafe key, an unparseable step; sent to the
  DLQ with the reason, so the batch carries on and nothing is lost;
- ignored / filtered: directory markers, temp files, keys outside the roots, and files that are not
  a layout's last file (those cannot complete a checkpoint, so they cost no listing);
- deferred: the last file is there but the checkpoint is not complete yet; the caller makes the
  message visible again later (a batch item failure), until ``max_age_s``, then it is dead-lettered;
- started / duplicate: the checkpoint is complete; the injected ``start_once`` starts its execution
  exactly once (idempotency layer + deterministic execution name).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from rlinf_bench.checkpoints.completeness import Clock, ObjectLister, check_completeness, utc_now
from rlinf_bench.checkpoints.keys import KeyIgnored, parse_key
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.errors import InvalidEventError
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.events import ObjectCreated, parse_body

log = logging.getLogger("rlinf_bench.intake")

#: Checkpoints this router instance (one Lambda container) has seen started, newest last.
STARTED_MEMORY = 1024

#: Starts the execution for a complete checkpoint at most once; returns StartResult.to_dict()
#: (plus ``"replayed": True`` when an idempotency layer answered from its store).
StartOnce = Callable[[CheckpointRef, EvalRequest], dict[str, Any]]


class Outcome(StrEnum):
    STARTED = "started"
    DUPLICATE = "duplicate"
    FILTERED = "filtered"
    IGNORED = "ignored"
    DEFERRED = "deferred"
    DEAD_LETTERED = "dead_lettered"


@dataclass(frozen=True)
class RecordResult:
    """What the router did with one object event (or with an unreadable message)."""

    outcome: Outcome
    reason: str
    key: str = ""
    checkpoint: CheckpointRef | None = None
    execution_name: str = ""
    #: deferred only because files are still changing (all required files are there)
    waiting_for_quiet: bool = False


class DeadLetterSink(Protocol):
    """Where unusable messages go, with the reason (the DLQ in production)."""

    def send(self, body: str, reason: str) -> None: ...


class SqsDeadLetters:
    """Sends dead letters to an SQS queue; the reason travels as the ``reason`` message attribute."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self.queue_url = queue_url

    def send(self, body: str, reason: str) -> None:
        self._sqs.send_message(
            QueueUrl=self.queue_url,
            MessageBody=body or "<empty message body>",
            MessageAttributes={"reason": {"DataType": "String", "StringValue": reason[:4000] or "unknown"}},
        )


class Router:
    """Routes queue message bodies; every collaborator is injected so tests and replays use real ones."""

    def __init__(
        self,
        *,
        config: IntakeConfig,
        lister: ObjectLister,
        start_once: StartOnce,
        dead_letters: DeadLetterSink,
        clock: Clock = utc_now,
        observer: Callable[[RecordResult], None] | None = None,
    ) -> None:
        self.config = config
        self._lister = lister
        self._start_once = start_once
        self._dead_letters = dead_letters
        self._clock = clock
        self._observer = observer
        self._started: OrderedDict[str, tuple[CheckpointRef, str]] = OrderedDict()

    def route(self, body: str, *, first_seen: datetime | None = None) -> list[RecordResult]:
        """Decide on every object event in one message body. Never raises for bad input."""
        try:
            events = parse_body(body)
        except InvalidEventError as exc:
            return [self._dead(body, str(exc))]
        if not events:
            return [self._emit(RecordResult(Outcome.IGNORED, "S3 test event"))]
        return [self._route_event(body, event, first_seen) for event in events]

    def _route_event(self, body: str, event: ObjectCreated, first_seen: datetime | None) -> RecordResult:
        try:
            match = parse_key(event.key, bucket=event.bucket, patterns=self.config.patterns)
        except InvalidEventError as exc:
            return self._dead(body, str(exc), key=event.key)
        if isinstance(match, KeyIgnored):
            return self._emit(RecordResult(Outcome.IGNORED, match.reason, key=event.key))
        if not match.is_trigger:
            return self._emit(RecordResult(Outcome.FILTERED, "not a layout's last file", key=event.key))
        if match.root_uri in self._started:
            # A duplicate delivery in this container: skip the listing (the idempotency store would agree).
            ref, name = self._started[match.root_uri]
            return self._emit(RecordResult(Outcome.DUPLICATE, "execution already started", event.key, ref, name))
        verdict = check_completeness(
            match.root_uri,
            self._lister,
            quiet_period_s=self.config.quiet_period_s,
            layout=match.trigger_layout,
            clock=self._clock,
        )
        ref = match.checkpoint_ref(verdict.layout)
        if not verdict.complete:
            since = first_seen or event.time
            age = (self._clock() - since).total_seconds() if since else 0.0
            if age > self.config.max_age_s:
                reason = (
                    f"checkpoint {ref.uri} still incomplete {age:.0f}s after its event "
                    f"(max_age_s={self.config.max_age_s:.0f}): {verdict.reason}"
                )
                return self._dead(body, reason, key=event.key, checkpoint=ref)
            return self._emit(
                RecordResult(
                    Outcome.DEFERRED,
                    verdict.reason,
                    key=event.key,
                    checkpoint=ref,
                    waiting_for_quiet=verdict.files_ok,
                )
            )
        request = self.config.request_for(ref)
        started = self._start_once(ref, request)
        self._remember(match.root_uri, ref, str(started["name"]))
        duplicate = bool(started.get("already_started") or started.get("replayed"))
        outcome = Outcome.DUPLICATE if duplicate else Outcome.STARTED
        reason = "execution already started" if duplicate else f"started ({verdict.reason})"
        return self._emit(RecordResult(outcome, reason, event.key, ref, execution_name=str(started["name"])))

    def _remember(self, root_uri: str, ref: CheckpointRef, name: str) -> None:
        self._started[root_uri] = (ref, name)
        if len(self._started) > STARTED_MEMORY:
            self._started.popitem(last=False)

    def _dead(self, body: str, reason: str, *, key: str = "", checkpoint: CheckpointRef | None = None) -> RecordResult:
        self._dead_letters.send(body, reason)
        return self._emit(RecordResult(Outcome.DEAD_LETTERED, reason, key=key, checkpoint=checkpoint))

    def _emit(self, result: RecordResult) -> RecordResult:
        # Filtered/ignored records are the bulk of traffic when the rule cannot filter: keep them at debug.
        quiet = result.outcome in (Outcome.FILTERED, Outcome.IGNORED)
        level = logging.DEBUG if quiet else logging.WARNING if result.outcome is Outcome.DEAD_LETTERED else logging.INFO
        if log.isEnabledFor(level):
            log.log(
                level,
                "%s: %s",
                result.outcome.value,
                result.reason,
                extra={
                    "outcome": result.outcome.value,
                    "key": result.key,
                    "checkpoint": result.checkpoint.uri if result.checkpoint else None,
                    "execution_name": result.execution_name or None,
                },
            )
        if self._observer is not None:
            self._observer(result)
        return result
