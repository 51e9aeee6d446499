"""The backlog through the real router and execution starter, with throttling and lost answers injected at every
external call: no checkpoint is lost, none is started twice, slots never leak and never exceed the limit."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlinf_bench.intake.backlog import State, run_of
from rlinf_bench.intake.config import IntakeConfig
from tests.unit.intake.backlog_faults import (
    Bucket,
    Faults,
    FaultyMemoryStore,
    Harness,
    StepFunctions,
)

#: Two users' runs of the same experiment name: separate slots, separate newest checkpoints.
RUNS = ("alice/ppo", "bob/ppo", "carol/ppo")
ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("arrive"), st.sampled_from(RUNS), st.integers(1, 4)),
        st.tuples(st.just("end"), st.just(""), st.integers(0, 9)),
        st.tuples(st.just("retry"), st.just(""), st.integers(0, 9)),
    ),
    min_size=5,
    max_size=30,
)
#: How often a call fails (one in twenty to one in three) and the random source that picks which ones.
FAULTS = st.builds(Faults, st.floats(0.05, 0.35), st.builds(random.Random, st.integers(0, 2**32 - 1)))
POLICIES = st.sampled_from(["all", "latest", "every:2"])


def run_and_check(harness: Harness, actions: list[tuple[str, str, int]], limit: int) -> None:
    for action, run, n in actions:
        if action == "arrive":
            harness.arrive(run, n)
        elif action == "end":
            harness.end(n)
        else:
            harness.retry(n)
        check_always(harness, limit)
    harness.settle()
    check_always(harness, limit)
    check_settled(harness)


def check_always(harness: Harness, limit: int) -> None:
    """What must hold after every delivery, faults or not."""
    executions = list(harness.sfn.executions.values())
    per_checkpoint = Counter(e.checkpoint for e in executions)
    assert max(per_checkpoint.values(), default=0) <= 1, f"started twice: {per_checkpoint}"
    running = Counter(e.run for e in executions if e.status == "RUNNING")
    assert max(running.values(), default=0) <= limit, f"over the limit of {limit}: {running}"
    states = {e.uri: e.state for e in harness.store.entries()}
    for execution in executions:  # every execution is one the backlog took a slot for
        assert states.get(execution.checkpoint) in (State.STARTING, State.STARTED, State.FINISHED), execution


def check_settled(harness: Harness) -> None:
    """Once the faults stop and every execution has ended: nothing lost, nothing holding a slot."""
    entries = {e.uri: e for e in harness.store.entries()}
    assert set(entries) == harness.arrived, "a checkpoint whose event arrived has no decision: lost"
    executed = {e.checkpoint for e in harness.sfn.executions.values()}
    for uri, entry in entries.items():
        assert entry.state in (State.FINISHED, State.SUPERSEDED), (uri, entry.state, entry.reason)
        assert (uri in executed) == (entry.state is State.FINISHED), (uri, entry.state)
    for run in {run_of(u) for u in entries}:
        assert harness.store.running(run) == [], f"slots of {run} never freed"
        newest = max((e for e in entries.values() if e.run == run), key=lambda e: e.global_step)
        assert newest.state is State.FINISHED, f"the final checkpoint of {run} was not evaluated"
    if harness.config.backlog.when_free == "all":
        assert not [e for e in entries.values() if e.state is State.SUPERSEDED]
    assert harness.letters == []  # throttling is transient: nothing is dead-lettered


def config(limit: int, when_free: str) -> IntakeConfig:
    return IntakeConfig(quiet_period_s=0, backlog={"max_running": limit, "when_free": when_free})  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=ACTIONS, faults=FAULTS, limit=st.integers(1, 2), when_free=POLICIES)
def test_with_faults_at_every_call_no_checkpoint_is_lost_or_started_twice_and_no_slot_leaks(
    actions: list[tuple[str, str, int]], faults: Faults, limit: int, when_free: str
) -> None:
    store = FaultyMemoryStore(faults)
    harness = Harness(config(limit, when_free), faults, store, StepFunctions(faults), Bucket(faults))
    run_and_check(harness, actions, limit)
