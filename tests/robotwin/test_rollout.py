"""A real RoboTwin rollout. It needs the asset snapshot, which no machine of this project can download:
without it the test is skipped and says so. Nothing here stands in for a scene."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("robotwin", reason="needs the RoboTwin runtime: runs in .venv-robotwin (make test-robotwin)")

from eval_runner.cli import main
from eval_runner.envs.robotwin_assets import AssetsMissingError, resolve_assets


def _assets_or_skip() -> None:
    try:
        resolve_assets()
    except AssetsMissingError as exc:
        pytest.skip(f"RoboTwin assets absent, no rollout possible here: {exc}")


@pytest.mark.robotwin_assets
def test_given_the_assets_when_one_episode_runs_then_the_result_has_its_seed_and_steps(tmp_path: Path) -> None:
    _assets_or_skip()
    out = tmp_path / "run0.json"

    code = main(["--suite", "robotwin/lift_pot", "--trials", "1", "--policy", "builtin:hold", "--out", str(out)])

    result = json.loads(out.read_text())
    assert code == 0 and result["status"] == "complete"
    (episode,) = result["tasks"][0]["episodes"]
    assert episode["seed"] >= 100000
    # Holding still never lifts the pot: the episode runs to the task's step limit and fails.
    assert episode["success"] is False and episode["steps"] == 400
    skipped = result["provenance"]["extra"]["robotwin"]["skipped_seeds"]["lift_pot"]
    assert all(s["seed"] < episode["seed"] for s in skipped)
