"""Several policy calls in flight (``server:…?inflight=k``): the same episodes as one call at a time.

The rollout runs stand-in workers (fake_worker) against a real policy server on localhost; the served
policy is row-wise, so a run with two calls in flight must see and do exactly what the in-process run does.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.batching import PolicyCaller
from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.policies.remote import ServerPolicy
from eval_runner.policies.server import PolicyServer
from tests.unit.eval_runner.test_async_batching import RowWise, _episodes, rollout


def test_given_two_calls_in_flight_then_every_episode_sees_the_same_observations_as_in_process(
    tmp_path: Path,
) -> None:
    local, _, p_local = rollout(tmp_path, 1, trials=5)
    served = RowWise()
    with PolicyServer(served, port=0) as server:
        client = ServerPolicy(server.url, inflight=2)
        remote, builder, _ = rollout(tmp_path, 3, trials=5, policy=client)
        client.close()

    assert client.concurrent_calls == 2
    assert _episodes(remote) == _episodes(local)
    assert isinstance(p_local, RowWise)
    for episode_id, rows in p_local.seen.items():
        assert np.array_equal(np.stack(rows), np.stack(served.seen[episode_id])), episode_id
    # every episode was announced exactly once, before its first row reached the policy
    assert sorted(served.resets) == sorted(p_local.seen)
    assert builder.counters.policy_calls == server.requests


class Recorder(Policy):
    obs_spec = ObservationSpec(cameras=(), proprio=())
    concurrent_calls = 2

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], list[str]]] = []
        self.lock = threading.Lock()

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        raise AssertionError("with two slots the caller uses act_with_resets")

    def act_with_resets(self, resets: list[str], obs: dict[str, Any]) -> np.ndarray:
        with self.lock:
            self.calls.append((list(resets), list(obs["episode_id"])))
        return np.zeros((len(obs["episode_id"]), 7))


def _wait(caller: PolicyCaller) -> Any:
    import select

    select.select([caller.wake], [], [], 10)
    return caller.collect()


def test_given_a_reset_whose_row_is_in_a_later_call_then_it_travels_with_that_call() -> None:
    policy = Recorder()
    caller = PolicyCaller(policy)
    try:
        assert caller.slots == 2
        caller.submit("one", ["e1", "e2"], {"episode_id": ["e1"]}, 1)
        assert not caller.busy and caller.in_flight == 1
        caller.submit("two", [], {"episode_id": ["e2"]}, 1)
        assert caller.busy
        done = {_wait(caller).tag, _wait(caller).tag}
    finally:
        caller.close()

    assert done == {"one", "two"} and caller.in_flight == 0
    assert sorted(policy.calls) == [(["e1"], ["e1"]), (["e2"], ["e2"])]


def test_given_a_policy_without_act_with_resets_then_calls_run_one_at_a_time() -> None:
    class Plain(RowWise):
        concurrent_calls = 4

    caller = PolicyCaller(Plain())
    try:
        assert caller.slots == 1
    finally:
        caller.close()
