"""A policy server and the server: client talking over loopback (real websockets, real msgpack)."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.sync.client import connect
from websockets.sync.server import serve

from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.policies.factory import load_policy
from eval_runner.policies.remote import ServerPolicy
from eval_runner.policies.server import PolicyServer
from eval_runner.policies.wire import pack, unpack
from rlinf_bench.errors import PolicyError, PolicyServerUnreachableError

FAST = "retries=3&backoff_s=0.01&max_backoff_s=0.02"


class Recording(Policy):
    """Records what the server hands to the policy; fails on batches whose task says 'fail'."""

    obs_spec = ObservationSpec(cameras=("agentview",), resolution=64, proprio=("robot0_eef_pos",))

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def reset(self, episode_ids: list[str]) -> None:
        self.calls.append(("reset", episode_ids))

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        self.calls.append(("act", list(obs["episode_id"])))
        if "fail" in obs["task_description"]:
            raise ValueError("cannot handle this task")
        # Row i's action encodes the observation it saw, to prove rows are not mixed up.
        actions = np.zeros((len(obs["episode_id"]), 7), dtype=np.float32)
        actions[:, :3] = obs["robot0_eef_pos"]
        actions[:, 3] = obs["agentview_image"].mean(axis=(1, 2, 3))
        return actions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_given_batch_of_three_then_one_request_returns_three_actions(demo_ckpt: Path, obs_factory: Any) -> None:
    local = load_policy("builtin:demo", demo_ckpt)
    with PolicyServer(load_policy("builtin:demo", demo_ckpt), port=0) as server:
        client = load_policy(f"server:{server.url}", None)
        obs = obs_factory(3)
        actions = client.act(obs)
        assert actions.shape == (3, 7) and actions.dtype == np.float32
        np.testing.assert_array_equal(actions, local.act(obs))
        assert server.requests == 1 and server.batch_sizes == [3]
        for batch in (5, 1, 2):
            client.act(obs_factory(batch, seed=batch))
        assert server.requests == 4 and server.batch_sizes == [3, 5, 1, 2]
        assert client.describe()["server"]["weights_sha256"] == local.describe()["weights_sha256"]
        client.close()


def test_given_server_policy_spec_then_client_adopts_its_observation_spec(obs_factory: Any) -> None:
    policy = Recording()
    with PolicyServer(policy, port=0) as server:
        client = ServerPolicy(server.url)
        assert client.obs_spec == Recording.obs_spec  # so the env renders agentview at 64 px for it
        obs = obs_factory(2, cameras=("agentview",), resolution=64)
        actions = client.act(obs)
        np.testing.assert_allclose(actions[:, :3], obs["robot0_eef_pos"])
        np.testing.assert_allclose(actions[:, 3], obs["agentview_image"].mean(axis=(1, 2, 3)), rtol=1e-6)
        client.close()


def test_given_reset_then_it_reaches_the_server_policy_with_the_next_batch(obs_factory: Any) -> None:
    policy = Recording()
    with PolicyServer(policy, port=0) as server:
        client = ServerPolicy(server.url)
        obs = obs_factory(2, cameras=("agentview",), resolution=64)
        client.reset(obs["episode_id"])
        client.act(obs)
        client.act(obs)
        assert policy.calls == [
            ("reset", obs["episode_id"]),
            ("act", obs["episode_id"]),
            ("act", obs["episode_id"]),
        ]
        assert server.requests == 2  # resets ride along: still one request per vector step
        client.close()


def test_given_stateful_policy_served_then_results_match_local(obs_factory: Any) -> None:
    local = load_policy("builtin:random?seed=9", None)
    with PolicyServer(load_policy("builtin:random?seed=9", None), port=0) as server:
        client = load_policy(f"server:{server.url}", None)
        obs = obs_factory(3)
        for policy in (local, client):
            policy.reset(obs["episode_id"])
        for _ in range(3):
            np.testing.assert_array_equal(client.act(obs), local.act(obs))
        client.close()


def test_given_policy_raises_then_client_gets_policy_error_and_server_keeps_serving(obs_factory: Any) -> None:
    with PolicyServer(Recording(), port=0) as server:
        client = ServerPolicy(server.url)
        bad = {**obs_factory(2, cameras=("agentview",), resolution=64), "task_description": ["fail", "x"]}
        with pytest.raises(PolicyError, match=r"failed on this batch: ValueError: cannot handle this task"):
            client.act(bad)
        good = obs_factory(2, cameras=("agentview",), resolution=64)
        assert client.act(good).shape == (2, 7)
        assert (server.errors, server.requests) == (1, 1)
        client.close()


def test_given_wrong_action_shape_from_policy_then_error_reply_names_shapes(obs_factory: Any) -> None:
    class Short(Policy):
        obs_spec = ObservationSpec(proprio=())

        def act(self, obs: dict[str, Any]) -> np.ndarray:
            return np.zeros((1, 6))

    with PolicyServer(Short(), port=0) as server:
        client = ServerPolicy(server.url)
        with pytest.raises(PolicyError, match=r"shape \(1, 6\), expected \(3, 7\)"):
            client.act(obs_factory(3))
        client.close()


def test_given_malformed_frames_then_server_answers_errors_and_stays_up() -> None:
    with PolicyServer(load_policy("builtin:zero", None), port=0) as server, connect(server.url, proxy=None) as raw:
        metadata = unpack(raw.recv(timeout=5))
        assert metadata["protocol"] == "rlinf-bench-policy" and metadata["protocol_version"] == 1
        assert metadata["action_dim"] == 7 and metadata["obs_spec"]["cameras"] == []
        raw.send("not msgpack")
        assert "text frame" in unpack(raw.recv(timeout=5))["error"]
        raw.send(pack([1, 2, 3]))
        assert "must be a map" in unpack(raw.recv(timeout=5))["error"]
        raw.send(pack({"episode_id": ["a", "b"]}))
        reply = unpack(raw.recv(timeout=5))
        assert reply["actions"].shape == (2, 7) and reply["infer_ms"] >= 0


def test_given_health_probe_then_plain_http_answers_ok() -> None:
    with PolicyServer(load_policy("builtin:zero", None), port=0) as server:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{server.port}/healthz", timeout=5) as response:
            assert response.status == 200 and response.read() == b"OK\n"


def test_given_nothing_listening_then_backoff_grows_and_unreachable_error_names_url() -> None:
    url = f"ws://127.0.0.1:{free_port()}"
    waits: list[float] = []
    with pytest.raises(PolicyServerUnreachableError) as exc:
        ServerPolicy(url, retries=4, backoff_s=0.01, max_backoff_s=0.03, sleep=waits.append)
    assert waits == [0.01, 0.02, 0.03, 0.03]
    message = str(exc.value)
    assert url in message and "5 attempts" in message and "rlinf-bench serve-policy" in message


def test_given_unreachable_server_spec_then_load_policy_raises_after_retries() -> None:
    started = time.monotonic()
    with pytest.raises(PolicyServerUnreachableError, match="did not answer after 4 attempts"):
        load_policy(f"server:ws://127.0.0.1:{free_port()}?{FAST}", None)
    assert time.monotonic() - started < 30  # bounded: it gives up rather than hanging


def test_given_server_that_starts_late_then_client_connects_within_its_retries(obs_factory: Any) -> None:
    port = free_port()
    servers: list[PolicyServer] = []
    starter = threading.Timer(
        0.3, lambda: servers.append(PolicyServer(load_policy("builtin:zero", None), port=port).start())
    )
    starter.start()
    try:
        client = ServerPolicy(f"ws://127.0.0.1:{port}", retries=30, backoff_s=0.05, max_backoff_s=0.2)
        assert client.act(obs_factory(2)).shape == (2, 7)
        client.close()
    finally:
        starter.join()
        for server in servers:
            server.shutdown()


def test_given_server_restarted_then_client_reconnects_and_resends(obs_factory: Any) -> None:
    first = PolicyServer(load_policy("builtin:zero", None), port=0).start()
    client = ServerPolicy(first.url, retries=20, backoff_s=0.05, max_backoff_s=0.2)
    assert client.act(obs_factory(2)).shape == (2, 7)
    first.shutdown()  # closes the client's connection (code 1001)
    with PolicyServer(load_policy("builtin:zero", None), port=first.port) as second:
        assert client.act(obs_factory(3)).shape == (3, 7)
        assert second.requests == 1 and client.connects == 2
    client.close()


def _foreign_server(first_message: bytes) -> Any:
    def handler(connection: Any) -> None:
        connection.send(first_message)
        for _ in connection:
            pass

    server = serve(handler, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"policy": "openpi"}, "does not speak the rlinf-bench-policy protocol"),
        (
            {"protocol": "rlinf-bench-policy", "protocol_version": 99, "action_dim": 7},
            "speaks rlinf-bench-policy version 99",
        ),
        ({"protocol": "rlinf-bench-policy", "protocol_version": 1, "action_dim": 14}, "14-d actions"),
        (
            {"protocol": "rlinf-bench-policy", "protocol_version": 1, "action_dim": 7, "obs_spec": {"resolution": 2}},
            "invalid obs_spec",
        ),
    ],
)
def test_given_incompatible_server_then_client_refuses_without_retrying(metadata: dict[str, Any], message: str) -> None:
    server = _foreign_server(pack(metadata))
    try:
        port = server.socket.getsockname()[1]
        waits: list[float] = []
        with pytest.raises(PolicyError, match=message):
            ServerPolicy(f"ws://127.0.0.1:{port}", retries=3, sleep=waits.append)
        assert waits == []
    finally:
        server.shutdown()


def test_given_bad_url_then_error_before_connecting() -> None:
    with pytest.raises(PolicyError, match="must start with ws:// or wss://"):
        load_policy("server:http://127.0.0.1:8000", None)


class Slow(Policy):
    obs_spec = ObservationSpec(proprio=())

    def __init__(self) -> None:
        self.delays = [0.6]

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        if self.delays:
            time.sleep(self.delays.pop())
        return np.full((len(obs["episode_id"]), 7), len(obs["episode_id"]), dtype=np.float32)


def test_given_slow_reply_then_timeout_error_and_next_batch_gets_its_own_answer(obs_factory: Any) -> None:
    with PolicyServer(Slow(), port=0) as server:
        client = ServerPolicy(server.url, request_timeout_s=0.2, backoff_s=0.05)
        with pytest.raises(PolicyServerUnreachableError, match=r"did not answer a batch within 0.2s"):
            client.act(obs_factory(2))
        deadline = time.monotonic() + 10
        while server.requests < 1 and time.monotonic() < deadline:  # let the slow batch finish server-side
            time.sleep(0.05)
        actions = client.act(obs_factory(3))  # not the late reply to the 2-row batch
        assert actions.shape == (3, 7) and np.all(actions == 3)
        assert client.connects == 2
        client.close()


def test_given_server_restarted_with_other_obs_spec_then_client_refuses(obs_factory: Any) -> None:
    first = PolicyServer(load_policy("builtin:zero", None), port=0).start()
    client = ServerPolicy(first.url, retries=20, backoff_s=0.05, max_backoff_s=0.2)
    first.shutdown()
    with PolicyServer(Recording(), port=first.port), pytest.raises(PolicyError, match="different obs_spec"):
        client.act(obs_factory(1))
