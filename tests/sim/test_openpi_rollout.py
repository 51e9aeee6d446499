"""Real LIBERO rollouts through ``openpi:`` against openpi's own WebsocketPolicyServer.

The server (tests/openpi_server.py) records every request; the client is wrapped to keep the
observation rows the runner rendered, so the test can check what openpi's LIBERO client would have sent.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.loop import evaluate
from eval_runner.policies.base import Policy
from eval_runner.policies.conventions import libero_state
from eval_runner.policies.factory import load_policy
from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.errors import PolicyServerUnreachableError
from rlinf_bench.suites import get_suite
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim
pytest.importorskip("openpi_server", reason="pip install 'rlinf-bench[dev]' (openpi-server)")
image_tools = pytest.importorskip("openpi_client.image_tools")

from tests.openpi_server import served, start_server  # noqa: E402

MAX_STEPS = 6  # requests at policy steps 0 and 5: two per episode


class Rendered(Policy):
    """Delegates to the openpi client and keeps every observation row the runner rendered, per episode."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.obs_spec = inner.obs_spec
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def act(self, obs: dict[str, Any]) -> Any:
        for i, episode_id in enumerate(obs["episode_id"]):
            self.rows[episode_id].append({k: (v[i] if isinstance(v, list) else np.array(v[i])) for k, v in obs.items()})
        return self.inner.act(obs)

    def reset(self, episode_ids: list[str]) -> None:
        self.inner.reset(episode_ids)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def close(self) -> None:
        self.inner.close()


def _evaluate(
    url: str, tmp_path: Path, cache: Path, *, workers: int = 1, name: str = "run"
) -> tuple[RunResult, Rendered]:
    policy = Rendered(load_policy(f"openpi:{url}", None))
    run = make_run(trials_per_task=2, max_steps=MAX_STEPS, workers=workers, policy=f"openpi:{url}")
    try:
        result = evaluate(run, out_path=tmp_path / f"{name}.json", policy=policy, settings=settings(cache))
    finally:
        policy.close()
    return result, policy


@dataclass(frozen=True)
class ServedRun:
    """One run through a recording openpi server: the result, what the runner rendered, what the server got."""

    result: RunResult
    policy: Rendered
    requests: list[dict[str, Any]]


@pytest.fixture(scope="module")
def one_worker_run(tmp_path_factory: pytest.TempPathFactory, libero_cache: Path) -> ServedRun:
    """Two episodes of libero_spatial task 0 with one worker, served by openpi's server (read by two tests)."""
    tmp_path = tmp_path_factory.mktemp("openpi-one-worker")
    with served(tmp_path / "rec") as server:
        result, policy = _evaluate(server.url, tmp_path, libero_cache)
        requests = server.requests()
    return ServedRun(result, policy, requests)


def test_the_server_sees_openpis_libero_inputs_one_request_per_5_steps(one_worker_run: ServedRun) -> None:
    result, policy, requests = one_worker_run.result, one_worker_run.policy, one_worker_run.requests
    assert result.status is RunStatus.COMPLETE and result.episodes == 2
    assert (result.settle_steps, result.protocol.settle_gripper if result.protocol else None) == (10, -1.0)
    assert result.protocol is not None and result.protocol.render_resolution == 256
    assert [e.steps for e in result.tasks[0].episodes] == [MAX_STEPS, MAX_STEPS]
    assert len(requests) == 2 * 2  # two episodes, a request at policy steps 0 and 5 of each
    language = get_suite("libero_spatial").task(0).language
    rows = [row for episode in policy.rows.values() for row in episode]
    assert all(row["agentview_image"].shape == (256, 256, 3) for row in rows)
    for request in requests:
        state = request["state"]
        assert state.shape == (8,) and str(request["prompt"]) == language
        (row,) = [r for r in rows if np.allclose(libero_state(r), state, rtol=0, atol=1e-12)]
        for key, camera in (("image", "agentview"), ("wrist", "robot0_eye_in_hand")):
            expected = image_tools.resize_with_pad(row[f"{camera}_image"][::-1, ::-1], 224, 224)
            assert request[key].dtype == np.uint8 and np.array_equal(request[key], expected), key
    # The runner executed each 5-action chunk and rendered only what came back: two observations per
    # episode reached the policy (after the 10 settle steps, then after the first chunk), both sent.
    for episode in policy.rows.values():
        asked = [i for i, r in enumerate(episode) if any(np.allclose(libero_state(r), q["state"]) for q in requests)]
        assert asked == [0, 1] and len(episode) == 2
    described = result.provenance.extra["policy"]
    assert described["server_metadata"]["policy"] == "tests.openpi_server"
    assert described["convention"] == {
        "replan": 5,
        "resize": 224,
        "rotate": True,
        "wrist": True,
        "resolution": None,
        "image_key": "observation/image",
        "wrist_key": "observation/wrist_image",
        "state_key": "observation/state",
        "prompt_key": "prompt",
    }


def test_trajectories_are_identical_with_one_and_two_workers(
    tmp_path: Path, libero_cache: Path, one_worker_run: ServedRun
) -> None:
    with served(tmp_path / "rec2") as server:
        result, two_workers = _evaluate(server.url, tmp_path, libero_cache, workers=2, name="w2")
    assert one_worker_run.result.status is RunStatus.COMPLETE and result.status is RunStatus.COMPLETE
    trajectories = [
        {e: np.stack([libero_state(r) for r in rows]) for e, rows in policy.rows.items()}
        for policy in (one_worker_run.policy, two_workers)
    ]
    one, two = trajectories
    assert sorted(one) == sorted(two) == ["t0-s0-a0", "t0-s1-a0"]
    for episode in one:
        assert np.array_equal(one[episode], two[episode]), episode
    assert not np.allclose(one["t0-s0-a0"][0], one["t0-s0-a0"][-1])  # the chunks moved the arm


def test_a_server_killed_mid_run_leaves_an_incomplete_run_that_resume_finishes(
    tmp_path: Path, libero_cache: Path
) -> None:
    server = start_server(tmp_path / "rec-a")
    spec = f"openpi:{server.url}?retries=2&backoff_s=0.05"
    run = make_run(trials_per_task=2, max_steps=MAX_STEPS, policy=spec)
    out = tmp_path / "run.json"

    def kill_after_first(partial: RunResult) -> None:
        if partial.episodes == 1:
            server.stop()

    try:
        with pytest.raises(PolicyServerUnreachableError):
            evaluate(run, out_path=out, settings=settings(libero_cache), on_episode=kill_after_first)
        interrupted = RunResult.load(out)
        assert interrupted.status is RunStatus.INCOMPLETE and interrupted.episodes == 1
        assert "--resume" in (interrupted.error or "")

        restarted = start_server(tmp_path / "rec-b", port=server.port)
        try:
            final = evaluate(run, out_path=out, settings=settings(libero_cache, resume=True))
        finally:
            restarted.stop()
    finally:
        server.stop()
    assert final.status is RunStatus.COMPLETE and final.episodes == 2
    assert [e.init_state for e in final.tasks[0].episodes] == [0, 1]
    assert final.provenance.extra["resumed"]["episodes"] == 1
