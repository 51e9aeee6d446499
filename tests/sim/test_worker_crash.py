"""A worker that dies mid-episode is restarted and the episode re-run; a crash loop fails the run cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from eval_runner.testing import FaultInjection
from rlinf_bench.contracts import RunStatus
from tests.sim.helpers import CrashedRun, make_run, settings

pytestmark = pytest.mark.sim


def test_given_a_worker_dying_mid_episode_when_evaluated_then_the_episode_is_rerun_and_counted_once(
    tmp_path: Path, libero_cache: Path
) -> None:
    marker = tmp_path / "crashed-once"
    fault = FaultInjection(task_id=0, init_state=0, at_step=2, marker_file=marker)

    result = evaluate(
        make_run(trials_per_task=2),
        out_path=tmp_path / "r.json",
        settings=settings(libero_cache, fault_injection=fault),
    )

    assert marker.exists()  # the worker really died once
    assert result.status is RunStatus.COMPLETE
    episodes = {e.init_state: e for e in result.tasks[0].episodes}
    assert sorted(episodes) == [0, 1] and result.episodes == 2
    assert episodes[0].retries == 1 and episodes[0].steps == 5
    assert episodes[1].retries == 0
    assert result.provenance.extra["worker_restarts"] == 1


def test_given_a_worker_that_always_crashes_when_evaluated_then_the_run_fails_and_keeps_finished_episodes(
    always_crashing_run: CrashedRun,
) -> None:
    # the session's run: initial state 1 crashes at every try, one retry allowed
    assert "initial state 1 crashed its worker 2 times" in str(always_crashing_run.error)

    on_disk = json.loads(always_crashing_run.result_json)
    assert on_disk["status"] == "failed"
    assert "WorkerCrashError" in on_disk["error"] and "max_retries=1" in on_disk["error"]
    assert [e["init_state"] for e in on_disk["tasks"][0]["episodes"]] == [0]


def test_given_a_worker_that_stops_answering_when_evaluated_then_it_is_killed_and_the_episode_rerun(
    tmp_path: Path, libero_cache: Path
) -> None:
    marker = tmp_path / "hung-once"
    fault = FaultInjection(task_id=0, init_state=0, at_step=1, marker_file=marker, mode="hang")

    result = evaluate(
        make_run(trials_per_task=1),
        out_path=tmp_path / "r.json",
        settings=settings(libero_cache, fault_injection=fault, step_timeout_s=5),
    )

    assert marker.exists()
    [episode] = result.tasks[0].episodes
    assert (episode.retries, episode.steps, result.status) == (1, 5, RunStatus.COMPLETE)
