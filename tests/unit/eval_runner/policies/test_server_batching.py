"""The policy server's batching: requests in flight from every connection share one policy call.

A real websocket server on localhost; the policy blocks its first call until the test has queued the
other requests, so which requests are merged does not depend on timing.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.policies.remote import ServerPolicy
from eval_runner.policies.request_batching import PendingRequest, RequestQueue, ServerBatching
from eval_runner.policies.server import PolicyServer, busy_by_window


def _obs(ids: list[str], x0: float = 0.0) -> dict[str, Any]:
    return {
        "x": np.arange(len(ids), dtype=np.float32)[:, None] + x0,
        "episode_id": ids,
        "task_description": ["t"] * len(ids),
    }


class Gated(Policy):
    """Row-wise actions (x + 1); the first call waits for ``gate``; records each call's ids and resets."""

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.calls: list[list[str]] = []
        self.events: list[tuple[str, list[str]]] = []

    def reset(self, episode_ids: list[str]) -> None:
        self.events.append(("reset", list(episode_ids)))

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        self.entered.set()
        self.gate.wait(10)
        if any(e == "bad" for e in obs["episode_id"]):
            raise ValueError("row 'bad' cannot be served")
        self.calls.append(list(obs["episode_id"]))
        self.events.append(("act", list(obs["episode_id"])))
        out = np.zeros((len(obs["episode_id"]), 7), dtype=np.float32)
        out[:, 0] = obs["x"][:, 0] + 1.0
        return out


def _send_all(server: PolicyServer, batches: list[tuple[list[str], list[str]]]) -> list[Any]:
    """Send each (resets, ids) batch on its own connection at once; the replies, in the same order."""
    clients = [ServerPolicy(server.url, inflight=1) for _ in batches]
    replies: list[Any] = [None] * len(batches)

    def send(i: int) -> None:
        resets, ids = batches[i]
        try:
            replies[i] = clients[i].act_with_resets(resets, _obs(ids, x0=10.0 * i))
        except Exception as exc:
            replies[i] = exc

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(batches))]
    for t in threads:
        t.start()
    return [threads, replies, clients]  # type: ignore[list-item]


def test_given_requests_queued_while_the_policy_is_busy_then_they_share_one_call_and_each_gets_its_rows() -> None:
    policy = Gated()
    with PolicyServer(policy, port=0) as server:
        first = ServerPolicy(server.url, inflight=1)
        blocker = threading.Thread(target=lambda: first.act(_obs(["a"])))
        blocker.start()
        assert policy.entered.wait(10)
        threads, replies, clients = _send_all(server, [(["b"], ["b", "c"]), ([], ["d"])])
        while server._queue._queue.qsize() < 2:  # both queued behind the blocked call
            threading.Event().wait(0.01)
        policy.gate.set()
        for t in [blocker, *threads]:
            t.join(10)

        assert sorted(map(sorted, policy.calls)) == [["a"], ["b", "c", "d"]]
        assert server.call_sizes == [1, 3] and sorted(server.batch_sizes) == [1, 1, 2]
        assert np.array_equal(replies[0][:, 0], [1.0, 2.0]) and np.array_equal(replies[1][:, 0], [11.0])
        # the merged call's resets came before it
        assert policy.events.index(("reset", ["b"])) < next(i for i, e in enumerate(policy.events) if "d" in e[1])
        for c in [first, *clients]:
            c.close()


def test_given_a_merged_call_that_fails_then_only_the_request_with_the_bad_row_gets_the_error() -> None:
    policy = Gated()
    with PolicyServer(policy, port=0) as server:
        first = ServerPolicy(server.url, inflight=1)
        blocker = threading.Thread(target=lambda: first.act(_obs(["a"])))
        blocker.start()
        assert policy.entered.wait(10)
        threads, replies, clients = _send_all(server, [([], ["bad"]), ([], ["e"])])
        while server._queue._queue.qsize() < 2:
            threading.Event().wait(0.01)
        policy.gate.set()
        for t in [blocker, *threads]:
            t.join(10)

        assert "row 'bad' cannot be served" in str(replies[0])
        assert np.array_equal(replies[1][:, 0], [11.0])
        assert server.errors == 1
        for c in [first, *clients]:
            c.close()


def _pending(ids: list[str], *, width: int = 1) -> PendingRequest:
    return PendingRequest(
        obs={"x": np.zeros((len(ids), width), np.float32), "episode_id": ids}, resets=[], rows=len(ids)
    )


def test_given_a_row_cap_then_a_call_stops_before_it_and_the_next_request_leads_the_next_call() -> None:
    q = RequestQueue(ServerBatching(max_batch=3))
    for ids in (["a", "b"], ["c"], ["d", "e"], ["f"]):
        q.put(_pending(ids))

    first, second = q.next_call(), q.next_call()

    assert first is not None and second is not None
    assert [r.obs["episode_id"] for r in first] == [["a", "b"], ["c"]]
    assert [r.obs["episode_id"] for r in second] == [["d", "e"], ["f"]]


def test_given_requests_of_other_shapes_then_they_are_not_merged_and_keep_their_order() -> None:
    q = RequestQueue(ServerBatching())
    q.put(_pending(["a"]))
    q.put(_pending(["b"], width=2))
    q.put(_pending(["c"]))
    q.put(None)

    calls = []
    while (call := q.next_call()) is not None:
        calls.append([r.obs["episode_id"][0] for r in call])

    assert calls == [["a"], ["b"], ["c"]]


def test_given_a_window_then_a_request_arriving_within_it_joins_the_call() -> None:
    q = RequestQueue(ServerBatching(window_ms=2000))
    q.put(_pending(["a"]))
    timer = threading.Timer(0.05, q.put, args=(_pending(["b"]),))
    timer.start()
    stopper = threading.Timer(0.1, q.put, args=(None,))
    stopper.start()

    call = q.next_call()

    assert call is not None and [r.obs["episode_id"] for r in call] == [["a"], ["b"]]
    assert q.next_call() is None


class Slow(Policy):
    """Takes 20 ms per row, like a GPU forward whose time grows with the batch."""

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        rows = len(obs["episode_id"])
        threading.Event().wait(0.02 * rows)
        return np.zeros((rows, 7), dtype=np.float32)


def test_given_calls_of_several_sizes_then_the_summary_says_how_busy_the_model_was_and_its_time_per_row() -> None:
    with PolicyServer(Slow(), port=0) as server:
        assert server.call_summary()["policy_calls"] == 0 and "model_busy" not in server.call_summary()
        client = ServerPolicy(server.url, inflight=1)
        for ids in (["a"], ["a", "b"], ["a", "b"]):
            client.act(_obs(ids))
        threading.Event().wait(0.1)  # the model thread idles: busy share falls below 1
        summary = server.call_summary()
        client.close()

    assert summary["policy_calls"] == 3 and summary["mean_rows_per_call"] == 1.67
    assert 0.1 <= summary["model_busy_s"] < 0.3
    assert 0.2 < summary["model_busy"] < 0.9
    assert set(summary["ms_per_row_by_rows"]) == {1, 2}
    assert [calls for calls, _ in summary["ms_per_row_by_rows"].values()] == [1, 2]
    assert all(19.0 <= ms < 40.0 for _, ms in summary["ms_per_row_by_rows"].values())
    by_tenth = summary["model_busy_by_tenth"]  # busy first, then the 0.1 s idle at the end
    assert len(by_tenth) == 10 and by_tenth[0] > 0.5 and by_tenth[-1] == 0.0


def test_busy_by_window_splits_a_call_across_the_windows_it_spans() -> None:
    # windows of 1 s over [10, 14]: a call 10.5-11.5 and one 13.0-13.25
    assert busy_by_window([10.5, 13.0], [1.0, 0.25], 10.0, 14.0, windows=4) == [0.5, 0.5, 0.0, 0.25]
    assert busy_by_window([], [], 10.0, 10.0, windows=4) == []
