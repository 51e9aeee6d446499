"""A policy that misbehaves mid-run fails the run with a message naming the problem, keeping finished episodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.loop import evaluate
from eval_runner.policies.base import ObservationSpec, Policy
from rlinf_bench.errors import PolicyError
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


class BreaksOnSecondEpisode(Policy):
    """Zero actions, except a 6-dim action once the second initial state's episode is running."""

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        batch = len(obs["episode_id"])
        width = 6 if any(e.startswith("t0-s1") for e in obs["episode_id"]) else 7
        return np.zeros((batch, width))


def test_given_a_policy_returning_malformed_actions_then_the_run_fails_naming_the_shape_and_keeps_episode_0(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "r.json"

    with pytest.raises(PolicyError, match=r"shape \(1, 6\)"):
        evaluate(
            make_run(trials_per_task=2), out_path=out, policy=BreaksOnSecondEpisode(), settings=settings(libero_cache)
        )

    on_disk = json.loads(out.read_text())
    assert on_disk["status"] == "failed" and "PolicyError" in on_disk["error"]
    assert [e["init_state"] for e in on_disk["tasks"][0]["episodes"]] == [0]
