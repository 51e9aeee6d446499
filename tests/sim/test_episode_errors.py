"""A simulator exception inside a step: the run fails by default, or only its episode with fail-episode."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.errors import SimulatorError
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim

HOOK = "tests.sim.scene_hooks:raise_on_second_step"


def test_given_the_default_then_a_simulator_exception_fails_the_run_naming_it(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "run.json"
    with pytest.raises(SimulatorError, match="became unstable"):
        evaluate(make_run(trials_per_task=2), out_path=out, settings=settings(libero_cache, scene_hook=HOOK))
    result = RunResult.load(out)
    assert result.status is RunStatus.FAILED and "became unstable" in (result.error or "")
    assert result.protocol is not None and result.protocol.on_episode_error == "fail-run"


def test_given_fail_episode_then_each_broken_episode_is_a_recorded_failure_and_the_run_completes(
    tmp_path: Path, libero_cache: Path
) -> None:
    run = make_run(trials_per_task=2, on_episode_error="fail-episode")
    result = evaluate(run, out_path=tmp_path / "run.json", settings=settings(libero_cache, scene_hook=HOOK))

    assert result.status is RunStatus.COMPLETE and result.episodes == 2 and result.successes == 0
    episodes = result.tasks[0].episodes
    assert [e.init_state for e in episodes] == [0, 1]
    assert all(e.steps == 1 and not e.success and "became unstable" in (e.error or "") for e in episodes)
    assert result.protocol is not None and result.protocol.on_episode_error == "fail-episode"
