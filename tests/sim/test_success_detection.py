"""Success is LIBERO's own goal check, and the runner records it.

The scene hook puts libero_spatial task 0's bowl onto the plate through MuJoCo (qpos of the bowl's free
joint) after settling; the goal (On akita_black_bowl_1 plate_1) then holds once the bowl lands. The
same task, initial state and policy without the hook fail (see test_rollout.py), so this test can fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from rlinf_bench.contracts import RunStatus
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


def test_given_the_bowl_placed_on_the_plate_when_evaluated_then_the_episode_is_recorded_as_a_success(
    tmp_path: Path, libero_cache: Path
) -> None:
    run = make_run(max_steps=30)
    opts = settings(libero_cache, scene_hook="tests.sim.scene_hooks:place_bowl_on_plate", settle_steps=15)

    result = evaluate(run, out_path=tmp_path / "r.json", settings=opts)

    assert result.status is RunStatus.COMPLETE
    [episode] = result.tasks[0].episodes
    assert episode.success is True
    assert 1 <= episode.steps < 30  # ended by LIBERO's success, not by the horizon
    assert result.success_rate == 1.0 and result.tasks[0].successes == 1
    assert result.settle_steps == 15
