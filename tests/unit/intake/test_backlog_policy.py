"""The backlog's policy and its exactly-once property over any order of arrivals, redeliveries and ends."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.intake.backlog import Backlog, BacklogPolicy, MemoryStore, State


def _ref(step: int, run: str = "exp") -> CheckpointRef:
    """A checkpoint of the run folder ``run`` (``alice/ppo``); its experiment is the folder's last name."""
    return CheckpointRef(
        uri=f"s3://b/{run}/checkpoints/global_step_{step}", experiment=run.rsplit("/", 1)[-1], global_step=step
    )


def test_given_every_3_when_a_slot_frees_then_multiples_of_3_and_the_newest_are_kept() -> None:
    backlog = Backlog(BacklogPolicy(max_running=1, when_free="every:3"), MemoryStore())
    started: list[int] = []
    for step in range(1, 9):
        backlog.admit(_ref(step), lambda r: started.append(r.global_step))
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
        if action == "arrive":
            backlog.admit(_ref(step), lambda r: starts.append(r.uri))
        elif action == "end":
            backlog.finish(_ref(step).uri, lambda r: starts.append(r.uri))
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


def test_two_users_runs_of_the_same_experiment_name_have_their_own_slots_and_newest() -> None:
    backlog = Backlog(BacklogPolicy(max_running=1, when_free="latest"), MemoryStore())
    started: list[str] = []
    for user, step in [("alice", 1), ("bob", 1), ("alice", 2), ("bob", 2), ("alice", 3)]:
        backlog.admit(_ref(step, f"{user}/ppo"), lambda r: started.append(r.uri))

    backlog.finish(_ref(1, "bob/ppo").uri, lambda r: started.append(r.uri))

    assert started == [_ref(1, "alice/ppo").uri, _ref(1, "bob/ppo").uri, _ref(2, "bob/ppo").uri]
    states = {e.uri: e.state for e in backlog.store.entries()}
    assert states[_ref(3, "alice/ppo").uri] is State.HELD  # bob's end frees nothing of alice's
    assert states[_ref(2, "alice/ppo").uri] is State.HELD  # and bob's newest supersedes nothing of alice's


class Throttled(Exception):
    """StartExecution answered ThrottlingException."""


def test_a_throttled_start_during_a_release_keeps_the_checkpoint_starting_and_its_retry_starts_it() -> None:
    backlog = Backlog(BacklogPolicy(max_running=1, when_free="all"), MemoryStore())
    backlog.admit(_ref(1), lambda r: None)
    backlog.admit(_ref(2), lambda r: None)  # held behind step 1

    def throttled(ref: CheckpointRef) -> None:
        raise Throttled("Rate exceeded")

    with pytest.raises(Throttled):
        backlog.finish(_ref(1).uri, throttled)
    entry = backlog.store.get(_ref(2).uri)
    assert entry is not None and entry.state is State.STARTING  # not "started": its execution does not exist

    started: list[int] = []
    backlog.finish(_ref(1).uri, lambda r: started.append(r.global_step))  # the end event, retried

    assert started == [2]
    assert backlog.store.get(_ref(2).uri).state is State.STARTED  # type: ignore[union-attr]
    backlog.finish(_ref(2).uri, lambda r: None)
    assert backlog.store.running("s3://b/exp/checkpoints") == []  # no slot taken for ever


def test_an_end_event_whose_release_failed_half_way_releases_when_it_comes_back() -> None:
    store = MemoryStore()
    backlog = Backlog(BacklogPolicy(max_running=1, when_free="latest"), store)
    for step in (1, 2, 3):
        backlog.admit(_ref(step), lambda r: None)
    original_held = store.held
    store.held = lambda run: (_ for _ in ()).throw(Throttled("GetItem"))  # type: ignore[method-assign]
    with pytest.raises(Throttled):
        backlog.finish(_ref(1).uri, lambda r: None)  # the slot is freed, the release fails
    store.held = original_held  # type: ignore[method-assign]

    started: list[int] = []
    backlog.finish(_ref(1).uri, lambda r: started.append(r.global_step))  # the retried end event

    assert started == [3]
    assert backlog.store.get(_ref(2).uri).state is State.SUPERSEDED  # type: ignore[union-attr]


def test_a_start_refused_for_good_gives_its_slot_back_and_says_why() -> None:
    from rlinf_bench.errors import InvalidRequestError

    backlog = Backlog(BacklogPolicy(max_running=1, when_free="all"), MemoryStore())

    def refused(ref: CheckpointRef) -> None:
        raise InvalidRequestError("Step Functions refused execution 'x' (InvalidExecutionInput)")

    entry = backlog.admit(_ref(1), refused)

    assert entry.state is State.SUPERSEDED and "InvalidExecutionInput" in entry.reason
    started: list[int] = []
    backlog.admit(_ref(2), lambda r: started.append(r.global_step))
    assert started == [2]  # the slot came back


@pytest.mark.parametrize("value", ["every:²", "every:٣", "every:0", "every:-1", "every:", "every:1e3", "x" * 10_000])
def test_a_when_free_that_is_no_policy_is_refused_with_our_message_naming_the_valid_forms(value: str) -> None:
    with pytest.raises(ValueError) as info:
        BacklogPolicy(when_free=value)
    message = str(info.value)
    assert "backlog.when_free" in message and "all, latest or every:K" in message
    assert "invalid literal" not in message and len(message) < 600
