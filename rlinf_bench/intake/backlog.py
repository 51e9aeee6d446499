"""Hold the backlog: at most ``max_running`` executions per training run, and which held checkpoints start next.

A run is known by its whole identity, the folder that holds its checkpoints (bucket and the prefix up to
``checkpoints``, :func:`run_of`): ``alice/ppo`` and ``bob/ppo`` are two runs with their own slots and their
own newest checkpoint. A complete checkpoint is recorded *held*, then :meth:`Backlog.release` starts what
the policy picks while the run has free slots; when one of the run's executions ends, :meth:`Backlog.finish`
frees its slot and releases again, by ``when_free``:

- ``all``: every held checkpoint starts, oldest step first, as slots allow (the others stay held);
- ``latest``: the newest held checkpoint starts, every older one is *superseded*;
- ``every:K``: held checkpoints whose step is a multiple of K are kept (oldest first), the rest superseded.

The final checkpoint of a run is never superseded: nothing in an RLinf layout marks a run's last save, so
"final" is defined as the newest checkpoint of the run held so far, and every policy starts it (a
checkpoint is only ever superseded in favour of a newer one, so the last save of a finished run is never).

Transactional with the start: a checkpoint takes a slot by moving ``held`` to ``starting`` in one
conditional write with the slot itself, and becomes ``started`` only once its execution exists. A start
that fails (throttled, timed out) leaves it ``starting`` with its slot, and every later call for the run
(the redelivered event, the next end event, the next arrival) starts it again before anything else; the
start is idempotent (one execution name per checkpoint), so a start whose answer was lost does not run
twice. A start Step Functions refuses for good (InvalidRequestError) gives the slot back and supersedes
the checkpoint with the reason. An end event frees the slot whether the checkpoint is ``starting`` or
``started``, and a repeated one releases again without freeing twice. Slots are the set of the run's
``starting`` and ``started`` checkpoints, moved in the same write as each state, so they cannot leak.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.errors import ContractError, InvalidRequestError

log = logging.getLogger("rlinf_bench.intake.backlog")

#: ``every:K``: K in ASCII digits, 1 to 999,999,999 (a step count; ``every:²`` is no number).
_EVERY = re.compile(r"every:([1-9][0-9]{0,8})")
#: Executions of one run at once: above this a limit is no limit (a typo for 0, or for 1).
MAX_RUNNING_LIMIT = 1000


class BacklogPolicy(BaseModel):
    """The intake config's ``backlog:`` block (absent or ``max_running: 0``: every checkpoint starts at once)."""

    model_config = ConfigDict(extra="forbid")

    #: executions of one run that may run at once; 0 = no limit
    max_running: int = Field(default=0, ge=0, le=MAX_RUNNING_LIMIT)
    #: which held checkpoints start when an execution ends: all | latest | every:K
    when_free: str = "all"

    @field_validator("when_free")
    @classmethod
    def _known(cls, value: str) -> str:
        if value in ("all", "latest") or _EVERY.fullmatch(value):
            return value
        raise ValueError(
            f"backlog.when_free {value[:40]!r} is not a policy: give all, latest or every:K "
            "(K a step count from 1 to 999999999 in digits 0-9, e.g. every:100)"
        )

    @property
    def limited(self) -> bool:
        return self.max_running > 0

    @property
    def every(self) -> int:
        """K of ``every:K`` (0 for the other policies)."""
        match = _EVERY.fullmatch(self.when_free)
        return int(match.group(1)) if match else 0


def run_of(uri: str) -> str:
    """The run a checkpoint belongs to: its root's parent folder (``s3://b/alice/ppo/checkpoints``)."""
    return uri.rstrip("/").rsplit("/", 1)[0]


class State(StrEnum):
    HELD = "held"
    #: took a slot; its execution is being started (started again on the next call if that failed)
    STARTING = "starting"
    STARTED = "started"
    SUPERSEDED = "superseded"
    FINISHED = "finished"
    #: a held or superseded checkpoint that ``backfill --superseded`` evaluated on request
    BACKFILLED = "backfilled"


#: States that hold one of the run's slots.
RUNNING = frozenset({State.STARTING, State.STARTED})


class Entry(BaseModel):
    """One checkpoint the backlog decided on, as the store keeps it."""

    uri: str
    experiment: str
    global_step: int
    state: State
    reason: str = ""
    checkpoint_json: str = ""  # the CheckpointRef, so a released one starts with the ref it arrived with

    @property
    def run(self) -> str:
        return run_of(self.uri)

    def ref(self) -> CheckpointRef:
        return CheckpointRef.model_validate_json(self.checkpoint_json)


class BacklogStore(Protocol):
    """Conditional writes only: every method that writes returns whether its condition held (it changed something).

    A checkpoint's membership of its run's held set and of its run's running slots follows its state
    (``held``; ``starting`` or ``started``) and moves in the same write as the state.
    """

    def create(self, entry: Entry) -> bool:
        """Record ``entry`` (held) if its checkpoint has no entry yet."""
        ...

    def get(self, uri: str) -> Entry | None: ...

    def transition(self, uri: str, old: State, new: State, reason: str, *, limit: int = 0) -> bool:
        """Move a checkpoint from ``old`` to ``new`` (only if it is in ``old``); entering a running state also
        needs fewer than ``limit`` running checkpoints in its run (0: no limit)."""
        ...

    def held(self, run: str) -> list[Entry]: ...

    def running(self, run: str) -> list[Entry]:
        """The run's checkpoints that hold a slot (``starting`` or ``started``)."""
        ...

    def entries(self) -> list[Entry]: ...


#: Starts the execution of a checkpoint (the router's idempotent start); raises when it could not.
Start = Callable[[CheckpointRef], object]


def choose(policy: BacklogPolicy, held: list[Entry]) -> tuple[list[Entry], list[tuple[Entry, str]]]:
    """Split held checkpoints into (to start, oldest first; to supersede, with the reason)."""
    ordered = sorted(held, key=lambda e: e.global_step)
    if not ordered or policy.when_free == "all":
        return ordered, []
    newest = ordered[-1]
    if policy.when_free == "latest":
        reason = f"superseded by step {newest.global_step} (backlog when_free=latest)"
        return [newest], [(e, reason) for e in ordered[:-1]]
    k = policy.every
    keep = [e for e in ordered if e.global_step % k == 0 or e is newest]
    dropped = [(e, f"step not a multiple of {k} (backlog when_free=every:{k})") for e in ordered if e not in keep]
    return keep, dropped


class Backlog:
    """The policy over a store: :meth:`admit` when a checkpoint is complete, :meth:`finish` when one ends."""

    def __init__(self, policy: BacklogPolicy, store: BacklogStore) -> None:
        self.policy = policy
        self.store = store

    def admit(self, ref: CheckpointRef, start: Start) -> Entry:
        """Record ``ref`` held (once), then release its run; returns its entry as it stands after.

        A checkpoint already started, superseded or finished keeps its decision. Raises what a start raised
        (the caller retries the event; the checkpoint is not lost: it is held or starting in the store).
        """
        known = self.store.get(ref.uri)
        if known is not None and known.state not in (State.HELD, State.STARTING):
            return known
        if known is None:
            self.store.create(
                Entry(
                    uri=ref.uri,
                    experiment=ref.experiment,
                    global_step=ref.global_step,
                    state=State.HELD,
                    reason=f"held: {self.policy.max_running} execution(s) of run {run_of(ref.uri)} running "
                    "(backlog max_running)",
                    checkpoint_json=ref.model_dump_json(),
                )
            )  # False: another container recorded it first, and the store says what it decided
        self.release(run_of(ref.uri), start)
        return self.store.get(ref.uri) or Entry(
            uri=ref.uri, experiment=ref.experiment, global_step=ref.global_step, state=State.HELD
        )

    def finish(self, uri: str, start: Start) -> list[Entry]:
        """An execution of ``uri`` ended: free its slot (once) and release its run; returns the started.

        A repeated end event frees nothing twice but releases again, so an end whose release failed half-way
        is finished by its retry."""
        entry = self.store.get(uri)
        if entry is None:
            return []  # not ours (started outside the backlog)
        if entry.state in RUNNING:
            self.store.transition(uri, entry.state, State.FINISHED, "execution ended")
        return self.release(entry.run, start)

    def release(self, run: str, start: Start) -> list[Entry]:
        """Start the run's interrupted starts, then what the policy picks from the held ones while slots are
        free; supersede the rest once the newest started. Returns the entries started by this call."""
        started = [e for e in self.store.running(run) if e.state is State.STARTING and self._start(e, start)]
        to_start, to_drop = choose(self.policy, self.store.held(run))
        released = 0
        for entry in to_start:
            if not self.store.transition(
                entry.uri, State.HELD, State.STARTING, "starting: a slot was free", limit=self.policy.max_running
            ):
                now = self.store.get(entry.uri)
                if now is not None and now.state is State.HELD:
                    break  # no free slot: the rest stay held for the next end event
                continue  # another container moved it first
            if self._start(entry, start):
                started.append(entry)
                released += 1
        if released or not to_start:
            for entry, reason in to_drop:
                self.store.transition(entry.uri, State.HELD, State.SUPERSEDED, reason)
        return started

    def _start(self, entry: Entry, start: Start) -> bool:
        """Start a ``starting`` checkpoint's execution and record it ``started``; False when refused for good."""
        try:
            start(entry.ref())
        except (InvalidRequestError, ContractError) as exc:
            # Refused for good: the slot goes back, and the reason says why it was not evaluated.
            reason = f"not started: {str(exc)[:500]}"
            self.store.transition(entry.uri, State.STARTING, State.SUPERSEDED, reason)
            log.warning("backlog: %s %s", entry.uri, reason)
            return False
        # Any other failure propagates with the checkpoint still starting: the retry starts it again.
        self.store.transition(entry.uri, State.STARTING, State.STARTED, "started: a slot was free")
        return True


class MemoryStore:
    """A store in one process (tests, the backlog simulation, and the reference for the DynamoDB store's conditions)."""

    def __init__(self) -> None:
        self.items: dict[str, Entry] = {}

    def create(self, entry: Entry) -> bool:
        if entry.uri in self.items:
            return False
        self.items[entry.uri] = entry
        return True

    def get(self, uri: str) -> Entry | None:
        return self.items.get(uri)

    def transition(self, uri: str, old: State, new: State, reason: str, *, limit: int = 0) -> bool:
        entry = self.items.get(uri)
        if entry is None or entry.state is not old:
            return False
        if limit and new in RUNNING and old not in RUNNING and len(self.running(entry.run)) >= limit:
            return False
        self.items[uri] = entry.model_copy(update={"state": new, "reason": reason})
        return True

    def held(self, run: str) -> list[Entry]:
        return [e for e in self.items.values() if e.run == run and e.state is State.HELD]

    def running(self, run: str) -> list[Entry]:
        return [e for e in self.items.values() if e.run == run and e.state in RUNNING]

    def entries(self) -> list[Entry]:
        return list(self.items.values())
