"""The backlog's policy and its exactly-once property over any order of arrivals, redeliveries and ends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.intake.backlog import Backlog, BacklogPolicy, MemoryStore, State


def _ref(step: int, experiment: str = "exp") -> CheckpointRef:
    return CheckpointRef(
        uri=f"s3://b/{experiment}/checkpoints/global_step_{step}", experiment=experiment, global_step=step
    )


def test_given_every_3_when_a_slot_frees_then_multiples_of_3_and_the_newest_are_kept() -> None:
    backlog = Backlog(BacklogPolicy(max_running=1, when_free="every:3"), MemoryStore())
    started: list[int] = []
    for step in range(1, 9):
        if backlog.admit(_ref(step)).state is State.STARTED:
            started.append(step)
    backlog.finish(_ref(1).uri, lambda r: started.append(r.global_step))
    states = {e.global_step: e.state for e in backlog.store.entries()}

    assert started == [1, 3]  # one slot: the oldest kept one starts, 6 and 8 (the newest) wait
    assert [s for s, v in states.items() if v is State.SUPERSEDED] == [2, 4, 5, 7]
    assert [s for s, v in states.items() if v is State.HELD] == [6, 8]


def test_given_an_unknown_when_free_then_the_error_names_the_field_and_the_choices() -> None:
    with pytest.raises(ValueError, match=r"backlog\.when_free 'newest'.*all, latest or every:K"):
        BacklogPolicy(when_free="newest")


# An action: ("arrive", step) a checkpoint's event (possibly again), ("end", step) its execution's end event.
ACTIONS = st.lists(st.tuples(st.sampled_from(["arrive", "end"]), st.integers(1, 12)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(actions=ACTIONS, limit=st.integers(1, 3), when_free=st.sampled_from(["all", "latest", "every:2", "every:5"]))
def test_no_checkpoint_is_both_started_and_superseded_and_none_is_lost(
    actions: list[tuple[str, int]], limit: int, when_free: str
) -> None:
    backlog = Backlog(BacklogPolicy(max_running=limit, when_free=when_free), MemoryStore())
    starts: list[str] = []
    for action, step in actions:
        if action == "arrive" and backlog.admit(_ref(step)).state is State.STARTED and _ref(step).uri not in starts:
            starts.append(_ref(step).uri)
        elif action == "end":
            starts += [e.uri for e in backlog.finish(_ref(step).uri, lambda r: None)]
    entries = {e.uri: e for e in backlog.store.entries()}
    superseded = {u for u, e in entries.items() if e.state is State.SUPERSEDED}

    assert len(starts) == len(set(starts))  # started at most once
    assert not superseded & set(starts)  # never both
    arrived = {_ref(s).uri for a, s in actions if a == "arrive"}
    assert set(entries) == arrived  # every arrival has a recorded decision: none lost
    running = sum(1 for e in entries.values() if e.state is State.STARTED)
    assert running <= limit
    if entries:  # the newest checkpoint (the run's final one) is never superseded
        assert max(entries.values(), key=lambda e: e.global_step).state is not State.SUPERSEDED
