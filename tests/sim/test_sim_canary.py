"""The simulator canary in the real simulator: it matches the shipped reference here, and it notices a
changed physics setting (the simulation timestep, the control frequency), naming the episode.

About 2 min on 2 idle cores: the whole canary once (4 episodes), then one episode per perturbation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.sim_canary import CANARY, compare, load_reference, play

pytestmark = pytest.mark.sim


def test_given_pinned_versions_then_the_canary_matches_the_shipped_reference(libero_cache: Path) -> None:
    here = play(CANARY, cache_dir=libero_cache)
    verdict = compare(here, load_reference())
    assert verdict.ok, verdict.summary + " | " + " | ".join(verdict.moved)


@pytest.mark.parametrize("change", [{"timestep": 0.0025}, {"control_freq": 25.0}])
def test_given_a_changed_physics_setting_then_the_canary_fails_naming_the_episode(
    libero_cache: Path, change: dict[str, float]
) -> None:
    one = CANARY.model_copy(update={"tasks": (0,), "states": (0,)})
    reference = load_reference()
    reference = reference.model_copy(
        update={"canary": one, "episodes": [e for e in reference.episodes if e.key == "0/0"]}
    )
    verdict = compare(play(one, change, cache_dir=libero_cache), reference)
    assert not verdict.ok
    assert verdict.moved and verdict.moved[0].startswith("task 0 state 0:"), verdict.moved
    assert "same versions" in verdict.summary  # nothing was upgraded: the summary points at a setting
