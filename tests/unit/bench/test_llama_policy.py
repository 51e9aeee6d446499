"""The GPU benchmark's 7B-class policy, shrunk to run on a CPU: its chunks, either way they are served."""

from __future__ import annotations

import numpy as np
import pytest

from tests.policy_fixtures import make_obs

pytest.importorskip("transformers", reason="pip install 'rlinf-bench[gpu-bench]'")

from bench.llama_policy import make_policy

TINY = {"layers": 1, "hidden": 64, "intermediate": 128, "heads": 2, "resolution": 32, "device": "cpu"}


def _obs(rows: int) -> dict:
    obs = make_obs(rows, cameras=("agentview", "robot0_eye_in_hand"), resolution=32, seed=1)
    obs["episode_id"] = [f"t0-s{i}-a0" for i in range(rows)]
    return obs


def test_given_runner_chunks_then_each_row_gets_its_8_actions_and_the_policy_mode_hands_out_the_same_ones() -> None:
    obs = _obs(3)
    runner = make_policy(**TINY)
    chunks = runner.act(obs)

    per_call = make_policy(**TINY, chunks="policy")  # same seed: the same random weights
    steps = np.stack([per_call.act(obs) for _ in range(8)], axis=1)

    assert chunks.shape == (3, 8, 7) and runner.forwards == 1
    assert per_call.forwards == 1  # one forward for the chunk, then 7 calls answered from the queue
    np.testing.assert_allclose(steps, chunks, rtol=0, atol=1e-6)
    assert set(np.unique(chunks[..., -1])) <= {-1.0, 1.0} and np.abs(chunks[..., :6]).max() <= 0.1
    assert runner.describe()["chunks_executed_by"] == "runner"


def test_given_an_unknown_chunks_mode_then_the_factory_refuses_it() -> None:
    with pytest.raises(ValueError, match="chunks='server'"):
        make_policy(**TINY, chunks="server")
