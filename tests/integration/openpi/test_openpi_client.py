"""The openpi: client against openpi's own WebsocketPolicyServer (PyPI openpi-server), no simulator."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from eval_runner.policies.base import Policy
from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import PolicyError, PolicyServerUnreachableError
from tests.policy_fixtures import make_obs

pytest.importorskip("openpi_server", reason="pip install 'rlinf-bench[dev]' (openpi-server)")
image_tools = pytest.importorskip("openpi_client.image_tools")

from tests.openpi_server import CHUNK, METADATA, chunk_for, free_port, served  # noqa: E402

CAMERAS = ("agentview", "robot0_eye_in_hand")


def _batch(rows: int, seed: int = 0) -> dict:
    obs = make_obs(rows, cameras=CAMERAS, resolution=256, seed=seed)
    obs["episode_id"] = [f"t0-s{i}-a0" for i in range(rows)]
    return obs


@contextmanager
def _started(spec: str, obs: dict) -> Iterator[Policy]:
    """An openpi client whose batch's episodes have just started; closed afterwards."""
    policy = load_policy(spec, None)
    try:
        policy.reset(obs["episode_id"])
        yield policy
    finally:
        policy.close()


def test_the_server_gets_openpis_libero_element_and_each_episode_replans_every_5_steps(tmp_path: Path) -> None:
    obs = _batch(3)
    with served(tmp_path / "rec") as server, _started(f"openpi:{server.url}?chunks=policy", obs) as policy:
        first = policy.act(obs)
        for _ in range(4):
            policy.act(obs)
        assert len(server.requests()) == 3  # one per episode for 5 steps
        policy.act(obs)
        requests = server.requests()

    assert len(requests) == 6
    seen = {float(r["state"][0]): r for r in requests[:3]}
    for row in range(3):
        state = np.concatenate(
            [
                obs["robot0_eef_pos"][row],
                image_tools_free_axis_angle(obs["robot0_eef_quat"][row]),
                obs["robot0_gripper_qpos"][row],
            ]
        )
        got = seen[float(state[0])]
        np.testing.assert_allclose(got["state"], state, rtol=0, atol=1e-12)
        for key, camera in (("image", "agentview"), ("wrist", "robot0_eye_in_hand")):
            expected = image_tools.resize_with_pad(obs[f"{camera}_image"][row][::-1, ::-1], 224, 224)
            assert np.array_equal(got[key], expected), (row, key)
        assert str(got["prompt"]) == obs["task_description"][row]
        np.testing.assert_allclose(first[row], chunk_for(got["state"])[0].astype(np.float32))


def test_by_default_each_row_gets_its_first_5_actions_as_a_chunk_for_the_runner(tmp_path: Path) -> None:
    obs = _batch(3)
    with served(tmp_path / "rec") as server, _started(f"openpi:{server.url}", obs) as policy:
        chunks = policy.act(obs)
        again = policy.act(obs)  # the runner asks again only after a chunk: every call is a request
        requests = server.requests()

    assert chunks.shape == (3, 5, 7) and len(requests) == 6
    assert policy.describe()["chunks_executed_by"] == "runner"
    for row in range(3):
        state = requests[row]["state"]
        (match,) = [i for i in range(3) if np.allclose(chunks[i], chunk_for(state)[:5].astype(np.float32))]
        np.testing.assert_array_equal(chunks[match], again[match])


def image_tools_free_axis_angle(quat: np.ndarray) -> np.ndarray:
    from robosuite.utils.transform_utils import quat2axisangle

    return quat2axisangle(np.asarray(quat, dtype=np.float64).copy())


def test_metadata_and_convention_are_recorded_and_requests_spread_over_connections(tmp_path: Path) -> None:
    with served(tmp_path / "rec") as server:
        policy = load_policy(f"openpi:{server.url}?connections=2&replan=3", None)
        try:
            obs = _batch(4)
            policy.act(obs)
            described = policy.describe()
            connects = policy.connects  # type: ignore[attr-defined]
        finally:
            policy.close()
    assert described["server_metadata"] == METADATA
    assert described["decoding"] == "deterministic test policy"
    assert described["convention"]["replan"] == 3 and described["convention"]["resize"] == 224
    assert described["connections"] == 2 and connects == 2
    assert policy.obs_spec.cameras == CAMERAS and policy.obs_spec.resolution is None  # the protocol's 256


def test_a_policy_that_raises_in_the_server_fails_with_the_servers_traceback(tmp_path: Path) -> None:
    with served(tmp_path / "rec", mode="raise") as server:
        policy = load_policy(f"openpi:{server.url}", None)
        try:
            with pytest.raises(PolicyError, match=r"(?s)traceback:.*Traceback.*ValueError: boom from the test policy"):
                policy.act(_batch(1))
        finally:
            policy.close()


def test_actions_of_the_wrong_shape_fail_naming_the_shapes(tmp_path: Path) -> None:
    with served(tmp_path / "rec", mode="bad_shape") as server:
        policy = load_policy(f"openpi:{server.url}", None)
        try:
            with pytest.raises(PolicyError, match=r"shape \(3, 6\).*\[H, 7\] with H >= replan=5"):
                policy.act(_batch(1))
        finally:
            policy.close()


def test_a_server_that_is_not_up_fails_after_bounded_retries() -> None:
    port = free_port()
    with pytest.raises(
        PolicyServerUnreachableError, match=rf"openpi server ws://127.0.0.1:{port} did not answer after 3"
    ):
        load_policy(f"openpi:ws://127.0.0.1:{port}?retries=2&backoff_s=0.01", None)


def test_a_server_restarted_between_requests_is_reconnected_once_and_a_dead_one_fails(tmp_path: Path) -> None:
    from tests.openpi_server import start_server

    first = start_server(tmp_path / "a")
    policy = load_policy(f"openpi:{first.url}?chunks=policy&retries=40&backoff_s=0.05&max_backoff_s=0.2", None)
    try:
        obs = _batch(1)
        policy.act(obs)
        first.stop()
        second = start_server(tmp_path / "b", port=first.port)
        try:
            for _ in range(CHUNK):  # the plan runs out: the next request goes to the restarted server
                policy.act(obs)
            assert len(second.requests()) >= 1 and policy.reconnects == 1  # type: ignore[attr-defined]
        finally:
            second.stop()
        with pytest.raises(PolicyServerUnreachableError):
            for _ in range(CHUNK):
                policy.act(obs)
    finally:
        policy.close()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openpi:http://x:1", "must start with ws:// or wss://"),
        ("openpi:ws://x:1?replan=0", "replan=0 must be >= 1"),
        ("openpi:ws://x:1?chunk=3", "unknown option 'chunk'"),
        ("openpi:ws://x:1?chunks=server", "chunks='server'; use chunks=runner or chunks=policy"),
    ],
)
def test_bad_specs_are_refused_before_connecting(spec: str, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        load_policy(spec, None)
