"""Hold the backlog: at most ``max_running`` executions per experiment, and which held checkpoints start next.

A complete checkpoint is *admitted* (a slot of its experiment is free: it starts) or *held* (recorded with
the reason). When one of the experiment's executions ends, :meth:`Backlog.finish` frees its slot and picks
from the held ones by ``when_free``:

- ``all``: every held checkpoint starts, oldest step first, as slots allow (the others stay held);
- ``latest``: the newest held checkpoint starts, every older one is *superseded*;
- ``every:K``: held checkpoints whose step is a multiple of K are kept (oldest first), the rest superseded.

The final checkpoint of a run is never superseded: nothing in an RLinf layout marks a run's last save, so
"final" is defined as the newest checkpoint of the experiment held so far, and every policy starts it (a
checkpoint is only ever superseded in favour of a newer one, so the last save of a finished run is never).

Exactly-once: every change of a checkpoint's state is a conditional write in the store (``held`` to
``started`` or ``superseded``, never both), and slot counts change only with a checkpoint's transition, so
a redelivered event or a concurrent release cannot start, supersede or free twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rlinf_bench.contracts.checkpoint import CheckpointRef

log = logging.getLogger("rlinf_bench.intake.backlog")


class BacklogPolicy(BaseModel):
    """The intake config's ``backlog:`` block (absent or ``max_running: 0``: every checkpoint starts at once)."""

    model_config = ConfigDict(extra="forbid")

    #: executions of one experiment that may run at once; 0 = no limit
    max_running: int = Field(default=0, ge=0)
    #: which held checkpoints start when an execution ends: all | latest | every:K
    when_free: str = "all"

    @field_validator("when_free")
    @classmethod
    def _known(cls, value: str) -> str:
        if value in ("all", "latest"):
            return value
        head, _, k = value.partition(":")
        if head == "every" and k.isdigit() and int(k) > 0:
            return value
        raise ValueError(f"backlog.when_free {value!r}: give all, latest or every:K (K a positive step count)")

    @property
    def limited(self) -> bool:
        return self.max_running > 0


class State(StrEnum):
    HELD = "held"
    STARTED = "started"
    SUPERSEDED = "superseded"
    FINISHED = "finished"
    #: a held or superseded checkpoint that ``backfill --superseded`` evaluated on request
    BACKFILLED = "backfilled"


class Entry(BaseModel):
    """One checkpoint the backlog decided on, as the store keeps it."""

    uri: str
    experiment: str
    global_step: int
    state: State
    reason: str = ""
    checkpoint_json: str = ""  # the CheckpointRef, so a released one starts with the ref it arrived with

    def ref(self) -> CheckpointRef:
        return CheckpointRef.model_validate_json(self.checkpoint_json)


class BacklogStore(Protocol):
    """Conditional writes only: every method returns whether its condition held (it changed something)."""

    def create(self, entry: Entry) -> bool:
        """Record ``entry`` if its checkpoint has no entry yet."""
        ...

    def get(self, uri: str) -> Entry | None: ...

    def transition(self, uri: str, old: State, new: State, reason: str) -> bool:
        """Move a checkpoint from ``old`` to ``new`` (only if it is in ``old``)."""
        ...

    def claim_slot(self, experiment: str, limit: int) -> bool:
        """Take one running slot of ``experiment`` if fewer than ``limit`` are taken."""
        ...

    def free_slot(self, experiment: str) -> None: ...

    def held(self, experiment: str) -> list[Entry]: ...

    def entries(self) -> list[Entry]: ...


#: Starts the execution of a released checkpoint (the router's idempotent start).
Start = Callable[[CheckpointRef], None]


def choose(policy: BacklogPolicy, held: list[Entry]) -> tuple[list[Entry], list[tuple[Entry, str]]]:
    """Split held checkpoints into (to start, oldest first; to supersede, with the reason)."""
    ordered = sorted(held, key=lambda e: e.global_step)
    if not ordered or policy.when_free == "all":
        return ordered, []
    newest = ordered[-1]
    if policy.when_free == "latest":
        reason = f"superseded by step {newest.global_step} (backlog when_free=latest)"
        return [newest], [(e, reason) for e in ordered[:-1]]
    k = int(policy.when_free.split(":")[1])
    keep = [e for e in ordered if e.global_step % k == 0 or e is newest]
    dropped = [(e, f"step not a multiple of {k} (backlog when_free=every:{k})") for e in ordered if e not in keep]
    return keep, dropped


class Backlog:
    """The policy over a store: :meth:`admit` when a checkpoint is complete, :meth:`finish` when one ends."""

    def __init__(self, policy: BacklogPolicy, store: BacklogStore) -> None:
        self.policy = policy
        self.store = store

    def admit(self, ref: CheckpointRef) -> Entry:
        """Start (slot free) or hold ``ref``; a checkpoint already decided keeps its decision."""
        known = self.store.get(ref.uri)
        if known is not None:
            return known
        base = Entry(
            uri=ref.uri,
            experiment=ref.experiment,
            global_step=ref.global_step,
            state=State.STARTED,
            checkpoint_json=ref.model_dump_json(),
        )
        if self.store.claim_slot(ref.experiment, self.policy.max_running):
            entry = base.model_copy(update={"reason": "a slot was free"})
            if self.store.create(entry):
                return entry
            self.store.free_slot(ref.experiment)  # another container decided it first: its decision stands
            return self.store.get(ref.uri) or entry
        reason = f"held: {self.policy.max_running} execution(s) of {ref.experiment} running (backlog max_running)"
        entry = base.model_copy(update={"state": State.HELD, "reason": reason})
        if not self.store.create(entry):
            return self.store.get(ref.uri) or entry
        return entry

    def finish(self, uri: str, start: Start) -> list[Entry]:
        """An execution of ``uri`` ended: free its slot (once) and release held checkpoints; returns the started."""
        entry = self.store.get(uri)
        if entry is None or not self.store.transition(uri, State.STARTED, State.FINISHED, "execution ended"):
            return []  # not ours, or a repeated end event: the slot was freed already
        self.store.free_slot(entry.experiment)
        return self.release(entry.experiment, start)

    def release(self, experiment: str, start: Start) -> list[Entry]:
        """Start what the policy picks from the held checkpoints while slots are free; supersede the rest."""
        to_start, to_drop = choose(self.policy, self.store.held(experiment))
        started: list[Entry] = []
        for entry in to_start:
            if not self.store.claim_slot(experiment, self.policy.max_running):
                break  # the rest stay held for the next finish
            if not self.store.transition(entry.uri, State.HELD, State.STARTED, "released: a slot was free"):
                self.store.free_slot(experiment)  # a concurrent release took it
                continue
            start(entry.ref())
            started.append(entry)
        if started or not to_start:
            for entry, reason in to_drop:
                self.store.transition(entry.uri, State.HELD, State.SUPERSEDED, reason)
        return started


class MemoryStore:
    """A store in one process (tests, and the reference for the DynamoDB store's conditions)."""

    def __init__(self) -> None:
        self.items: dict[str, Entry] = {}
        self.slots: dict[str, int] = {}

    def create(self, entry: Entry) -> bool:
        if entry.uri in self.items:
            return False
        self.items[entry.uri] = entry
        return True

    def get(self, uri: str) -> Entry | None:
        return self.items.get(uri)

    def transition(self, uri: str, old: State, new: State, reason: str) -> bool:
        entry = self.items.get(uri)
        if entry is None or entry.state is not old:
            return False
        self.items[uri] = entry.model_copy(update={"state": new, "reason": reason})
        return True

    def claim_slot(self, experiment: str, limit: int) -> bool:
        taken = self.slots.get(experiment, 0)
        if limit and taken >= limit:
            return False
        self.slots[experiment] = taken + 1
        return True

    def free_slot(self, experiment: str) -> None:
        self.slots[experiment] = max(0, self.slots.get(experiment, 0) - 1)

    def held(self, experiment: str) -> list[Entry]:
        return [e for e in self.items.values() if e.experiment == experiment and e.state is State.HELD]

    def entries(self) -> list[Entry]:
        return list(self.items.values())
