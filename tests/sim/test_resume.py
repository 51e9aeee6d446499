"""--resume keeps the finished episodes of an unfinished result and runs only the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from eval_runner.testing import FaultInjection
from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.errors import ConfigError, WorkerCrashError
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


def test_given_a_failed_run_when_resumed_then_only_missing_episodes_run_and_the_result_completes(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "r.json"
    run = make_run(trials_per_task=2)
    always_crash = FaultInjection(task_id=0, init_state=1, at_step=1)
    with pytest.raises(WorkerCrashError):
        evaluate(run, out_path=out, settings=settings(libero_cache, fault_injection=always_crash, max_retries=0))
    first = RunResult.load(out)
    assert first.status is RunStatus.FAILED and first.episodes == 1

    resumed = evaluate(run, out_path=out, settings=settings(libero_cache, resume=True))

    assert resumed.status is RunStatus.COMPLETE and resumed.episodes == 2
    assert resumed.tasks[0].episodes[0] == first.tasks[0].episodes[0]  # kept, not re-run
    assert resumed.timings.env_steps == 5  # only initial state 1 ran
    assert resumed.provenance.extra["resumed"]["episodes"] == 1
    # resuming a complete result runs nothing and returns it
    assert evaluate(run, out_path=out, settings=settings(libero_cache, resume=True)) == resumed


def test_given_a_result_of_another_run_when_resumed_then_it_is_refused_and_left_untouched(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "r.json"
    out.write_text(
        RunResult(
            suite="libero_spatial",
            run_index=0,
            seed=99,
            policy="builtin:zero",
            status=RunStatus.INCOMPLETE,
            trials_per_task=1,
            max_steps=5,
            settle_steps=10,
        ).to_json()
    )
    before = out.read_text()

    with pytest.raises(ConfigError, match=r"cannot resume .*seed: file has 99, this run 0"):
        evaluate(make_run(), out_path=out, settings=settings(libero_cache, resume=True))

    assert out.read_text() == before
    assert json.loads(before)["seed"] == 99
