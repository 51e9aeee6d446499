"""The checkpoint router's core: one queue message in, one decision per object event out.

Decisions, cheapest first:
- dead-lettered: malformed JSON, a wrong event type, an unsafe key, an unparseable step, a bucket that
  does not exist; sent to the DLQ with the reason at first sight (they fail the same way on every
  delivery), so the batch carries on and nothing is lost. Each record is dead-lettered once however
  often its message is received: the letter is keyed by message id and record (``letter_id``);
- ignored / filtered: directory markers, temp files, keys outside the roots, and files that are not
  a layout's last file (those cannot complete a checkpoint, so they cost no listing);
- deferred: the last file is there but the checkpoint is not complete yet; the caller makes the
  message visible again later (a batch item failure), until ``max_age_s``, then it is dead-lettered;
- started / duplicate: the checkpoint is complete; the injected ``start_once`` starts its execution
  exactly once (idempotency layer + deterministic execution name).

A checkpoint no request can be built for (InvalidRequestError, ContractError) is dead-lettered at first
sight too. Any other exception while listing or starting (throttling, timeouts, 5xx) is transient: it propagates,
so the message comes back after its visibility timeout, until ``max_age_s`` after the message was first
seen; then the record is dead-lettered with the last error as its reason.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from rlinf_bench.checkpoints.completeness import Clock, check_completeness, utc_now
from rlinf_bench.checkpoints.keys import KeyIgnored, KeyMatch, parse_key
from rlinf_bench.checkpoints.listing import ObjectLister
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.errors import ContractError, InvalidEventError, InvalidRequestError, StorageLocationError
from rlinf_bench.intake.backlog import Backlog, Entry, State
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.events import ObjectCreated, parse_body
from rlinf_bench.ports import DeadLetterSink

log = logging.getLogger("rlinf_bench.intake")

#: Checkpoints this router instance (one Lambda container) has seen started, newest last.
STARTED_MEMORY = 1024
#: Dead letters this router instance has sent (their letter ids), newest last.
LETTER_MEMORY = 4096

#: Failures that answer the same on every delivery: dead-lettered at first sight with their reason, never
#: retried as transient (an event no key rule accepts, a bucket that is not there or cannot be one, a request
#: no check accepts, an execution name or input Step Functions refuses).
PERMANENT = (InvalidEventError, StorageLocationError, InvalidRequestError, ContractError)

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
    HELD = "held"
    SUPERSEDED = "superseded"


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


@dataclass(frozen=True)
class _Letter:
    """A message body and the identity of the record a dead letter would be for."""

    body: str
    message_id: str
    part: str = "body"

    @property
    def letter_id(self) -> str:
        return f"{self.message_id}#{self.part}"

    def whole(self) -> _Letter:
        return self

    def record(self, index: int) -> _Letter:
        return _Letter(self.body, self.message_id, f"record-{index}")


class _BacklogStart:
    """The start the backlog calls: the router's idempotent start, remembering each answer by checkpoint URI.

    Checkpoints other than ``skip`` (the one whose event is being routed, reported by its own record) are
    reported as released from the backlog."""

    def __init__(self, router: Router, skip: str) -> None:
        self.router, self.skip = router, skip
        self.answers: dict[str, dict[str, Any]] = {}

    def __call__(self, ref: CheckpointRef) -> None:
        answer = self.router._start_once(ref, self.router.config.request_for(ref))
        self.answers[ref.uri] = answer
        if ref.uri != self.skip:
            name = str(answer["name"])
            self.router._emit(RecordResult(Outcome.STARTED, "released from the backlog", "", ref, name))


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
        backlog: Backlog | None = None,
    ) -> None:
        self.config = config
        #: only consulted when the config limits executions per experiment (backlog.max_running > 0)
        self.backlog = backlog if config.backlog.limited else None
        self._lister = lister
        self._start_once = start_once
        self._dead_letters = dead_letters
        self._clock = clock
        self._observer = observer
        self._started: OrderedDict[str, tuple[CheckpointRef, str]] = OrderedDict()
        self._lettered: OrderedDict[str, None] = OrderedDict()

    def route(self, body: str, *, first_seen: datetime | None = None, message_id: str = "") -> list[RecordResult]:
        """Decide on every object event in one message body. Never raises for bad input.

        ``message_id`` (SQS's, stable across redeliveries) keys the dead letters, so a message received
        many times is dead-lettered once; without one the body's digest stands in for it. Transient
        failures raise (the message is retried) until ``max_age_s`` after ``first_seen``.
        """
        letter = _Letter(body, message_id or "sha256:" + hashlib.sha256(body.encode("utf-8", "replace")).hexdigest())
        try:
            events = parse_body(body)
        except InvalidEventError as exc:
            return [self._dead(letter.whole(), str(exc))]
        if not events:
            return [self._emit(RecordResult(Outcome.IGNORED, "S3 test event"))]
        return [self._route_event(letter.record(i), event, first_seen) for i, event in enumerate(events)]

    def _route_event(self, letter: _Letter, event: ObjectCreated, first_seen: datetime | None) -> RecordResult:
        try:
            match = parse_key(event.key, bucket=event.bucket, patterns=self.config.patterns)
        except InvalidEventError as exc:
            return self._dead(letter, str(exc), key=event.key)
        if isinstance(match, KeyIgnored):
            return self._emit(RecordResult(Outcome.IGNORED, match.reason, key=event.key))
        if not match.is_trigger:
            return self._emit(RecordResult(Outcome.FILTERED, "not a layout's last file", key=event.key))
        if match.root_uri in self._started:
            # A duplicate delivery in this container: skip the listing (the idempotency store would agree).
            ref, name = self._started[match.root_uri]
            return self._emit(RecordResult(Outcome.DUPLICATE, "execution already started", event.key, ref, name))
        age = self._age(first_seen or event.time)
        try:
            return self._decide(letter, event, match, age)
        except PERMANENT as exc:  # e.g. the bucket does not exist: the same answer on every delivery
            return self._dead(letter, str(exc), key=event.key, checkpoint=match.checkpoint_ref())
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc)[:500]}"
            if age <= self.config.max_age_s:
                log.warning("transient failure, the message will be retried: %s", error, extra={"key": event.key})
                raise
            reason = (
                f"checkpoint {match.root_uri} kept failing {age:.0f}s after its event "
                f"(max_age_s={self.config.max_age_s:.0f}): {error}"
            )
            return self._dead(letter, reason, key=event.key, checkpoint=match.checkpoint_ref())

    def _age(self, since: datetime | None) -> float:
        return (self._clock() - since).total_seconds() if since else 0.0

    def _decide(self, letter: _Letter, event: ObjectCreated, match: KeyMatch, age: float) -> RecordResult:
        """List the checkpoint, then start it, defer it, or dead-letter it past ``max_age_s``."""
        verdict = check_completeness(
            match.root_uri,
            self._lister,
            quiet_period_s=self.config.quiet_period_s,
            layout=match.trigger_layout,
            clock=self._clock,
        )
        ref = match.checkpoint_ref(verdict.layout)
        if not verdict.complete:
            if age > self.config.max_age_s:
                reason = (
                    f"checkpoint {ref.uri} still incomplete {age:.0f}s after its event "
                    f"(max_age_s={self.config.max_age_s:.0f}): {verdict.reason}"
                )
                return self._dead(letter, reason, key=event.key, checkpoint=ref)
            return self._emit(
                RecordResult(
                    Outcome.DEFERRED,
                    verdict.reason,
                    key=event.key,
                    checkpoint=ref,
                    waiting_for_quiet=verdict.files_ok,
                )
            )
        # Built before anything is started or held: a checkpoint no request can be built for is refused now.
        request = self.config.request_for(ref)
        started: dict[str, Any] | None = None
        if self.backlog is not None:
            released = self._backlog_start(skip=ref.uri)
            entry = self.backlog.admit(ref, released)
            started = released.answers.get(ref.uri)
            if started is None and entry.state in (State.HELD, State.STARTING, State.SUPERSEDED):
                outcome = Outcome.SUPERSEDED if entry.state is State.SUPERSEDED else Outcome.HELD
                return self._emit(RecordResult(outcome, entry.reason, event.key, ref))
        if started is None:
            started = self._start_once(ref, request)
        self._remember(match.root_uri, ref, str(started["name"]))
        duplicate = bool(started.get("already_started") or started.get("replayed"))
        outcome = Outcome.DUPLICATE if duplicate else Outcome.STARTED
        reason = "execution already started" if duplicate else f"started ({verdict.reason})"
        return self._emit(RecordResult(outcome, reason, event.key, ref, execution_name=str(started["name"])))

    def execution_ended(self, checkpoint_uri: str) -> list[Entry]:
        """An execution of ``checkpoint_uri`` ended: release held checkpoints of its experiment (backlog policy).

        Called by the Step Functions status-change rule on AWS and by the embedded default's loop; a repeated
        call for the same end does nothing (the backlog's conditional writes).
        """
        if self.backlog is None:
            return []
        return self.backlog.finish(checkpoint_uri, self._backlog_start())

    def _backlog_start(self, *, skip: str = "") -> _BacklogStart:
        return _BacklogStart(self, skip)

    def _remember(self, root_uri: str, ref: CheckpointRef, name: str) -> None:
        self._started[root_uri] = (ref, name)
        if len(self._started) > STARTED_MEMORY:
            self._started.popitem(last=False)

    def _dead(
        self, letter: _Letter, reason: str, *, key: str = "", checkpoint: CheckpointRef | None = None
    ) -> RecordResult:
        # A redelivered message (one of its records deferred) decides its bad records again: send once.
        if letter.letter_id not in self._lettered:
            self._dead_letters.send(letter.body, reason, letter_id=letter.letter_id)
            self._lettered[letter.letter_id] = None
            if len(self._lettered) > LETTER_MEMORY:
                self._lettered.popitem(last=False)
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
