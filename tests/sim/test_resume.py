"""--resume keeps the finished episodes of an unfinished result and runs only the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.errors import ConfigError
from tests.sim.helpers import CrashedRun, make_run, settings

pytestmark = pytest.mark.sim


def test_given_a_failed_run_when_resumed_then_only_missing_episodes_run_and_the_result_completes(
    tmp_path: Path, libero_cache: Path, always_crashing_run: CrashedRun
) -> None:
    # the session's run that failed on initial state 1 (its worker crashed at every try), on our own copy
    out = tmp_path / "r.json"
    out.write_bytes(always_crashing_run.result_json)
    run = make_run(trials_per_task=2)
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
