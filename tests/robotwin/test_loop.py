"""RoboTwin through the one loop: worker processes, resume and videos, as LIBERO runs get them.

The scenes are the runtime's stand-in (tests/robotwin/fake_runtime.py: no SAPIEN, no assets); the rest is
real: the RoboTwin kind, its seed protocol and expert walks, the runtime's task registry, step limits,
configs and instruction templates, the loop's workers, scheduler, resume, videos and result writer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("robotwin", reason="needs the RoboTwin runtime: runs in .venv-robotwin (make test-robotwin)")

from eval_runner.envs.robotwin_kind import RoboTwinOptions
from eval_runner.loop import evaluate
from eval_runner.settings import EvalSettings
from rlinf_bench.contracts import CheckpointRef, EvalRun, RunResult, RunStatus
from tests.robotwin import fake_runtime

TRIALS = 4
TASKS = {0: "lift_pot", 1: "beat_block_hammer"}  # ids in the brief's robotwin suite


def _run(workers: int, videos: int = 0) -> EvalRun:
    return EvalRun(
        request_id="fake",
        checkpoint=CheckpointRef(uri="", experiment="none", global_step=0),
        suite="robotwin",
        run_index=0,
        seed=0,
        task_ids=list(TASKS),
        trials_per_task=TRIALS,
        policy="python:tests.robotwin.fake_runtime:make_policy",
        workers=workers,
        videos=videos,
    )


def _evaluate(
    tmp_path: Path, out: Path, run: EvalRun, *, on_episode: Callable[[RunResult], None] | None = None, **settings: Any
) -> RunResult:
    options = RoboTwinOptions(assets=str(fake_runtime.fake_assets(tmp_path / "assets")), runtime=fake_runtime.SPEC)
    return evaluate(
        run,
        out_path=out,
        env_options=options,
        settings=EvalSettings.model_validate({"progress": False, **settings}),
        on_episode=on_episode,
    )


def _expected_seeds() -> tuple[list[int], dict[str, str]]:
    """The first TRIALS seeds from 100000 the stand-in's expert solves, and the ones it skips on the way."""
    accepted: list[int] = []
    skipped: dict[str, str] = {}
    seed = 100000
    while len(accepted) < TRIALS:
        ok, why = fake_runtime.expert_solves(seed)
        if ok:
            accepted.append(seed)
        else:
            skipped[str(seed)] = why
        seed += 1
    return accepted, skipped


def _episodes(result: RunResult) -> dict[str, list[tuple[int, int, bool, int]]]:
    return {t.task_name: [(e.init_state, e.seed, e.success, e.steps) for e in t.episodes] for t in result.tasks}


def test_given_two_workers_then_each_task_gets_the_protocols_seeds_and_its_own_step_limit(tmp_path: Path) -> None:
    one = _evaluate(tmp_path, tmp_path / "one.json", _run(workers=1))
    two = _evaluate(tmp_path, tmp_path / "two.json", _run(workers=2))

    seeds, skipped = _expected_seeds()
    assert one.status is two.status is RunStatus.COMPLETE
    assert two.provenance.extra["workers"] == 2 and one.provenance.extra["workers"] == 1
    # the same episodes whatever the worker count: seeds from the protocol's walk, outcomes from the scene
    assert _episodes(one) == _episodes(two)
    for task in two.tasks:
        assert [e.seed for e in task.episodes] == seeds, task.task_name
        assert all(e.steps <= 400 for e in task.episodes)  # the runtime's step limit for both tasks
    for task in two.tasks:  # an episode succeeds when its own instruction says to grab
        assert {e.success for e in task.episodes} == {True, False}, task.task_name
    assert {e.steps for t in two.tasks for e in t.episodes if not e.success} == {400}
    record = two.provenance.extra["robotwin"]
    for name in TASKS.values():
        assert {str(s["seed"]): s["reason"] for s in record["skipped_seeds"][name]} == skipped
    assert record["first_seed"] == 100000 and record["step_limits"] == {"lift_pot": 400, "beat_block_hammer": 400}
    assert two.max_steps == 400 and two.settle_steps == 0
    assert "rlinf-robotwin-runtime" in two.provenance.packages


def test_given_an_interrupted_run_when_resumed_then_only_the_rest_runs_with_the_seeds_it_would_have_had(
    tmp_path: Path,
) -> None:
    reference = _evaluate(tmp_path, tmp_path / "reference.json", _run(workers=1))
    out = tmp_path / "run0.json"

    def stop_after_three(snapshot: RunResult) -> None:
        if snapshot.episodes >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _evaluate(tmp_path, out, _run(workers=2), on_episode=stop_after_three)
    first = RunResult.load(out)
    assert first.status is RunStatus.INCOMPLETE and first.episodes == 3

    resumed = _evaluate(tmp_path, out, _run(workers=2), resume=True)

    assert resumed.status is RunStatus.COMPLETE and resumed.episodes == 2 * TRIALS
    assert _episodes(resumed) == _episodes(reference)
    now = {(t.task_name, e.init_state): e for t in resumed.tasks for e in t.episodes}
    assert all(now[(t.task_name, e.init_state)] == e for t in first.tasks for e in t.episodes)  # kept, not re-run
    assert resumed.provenance.extra["resumed"]["episodes"] == 3
    reference_skips = reference.provenance.extra["robotwin"]["skipped_seeds"]
    assert resumed.provenance.extra["robotwin"]["skipped_seeds"] == reference_skips


def test_given_videos_then_each_task_keeps_its_failures_video_next_to_the_result(tmp_path: Path) -> None:
    out = tmp_path / "run0.json"

    result = _evaluate(tmp_path, out, _run(workers=2, videos=1))

    for task in result.tasks:
        with_video = [e for e in task.episodes if e.video]
        assert len(with_video) == 1, task.task_name
        (episode,) = with_video
        assert not episode.success  # failures first: each task has one
        video = Path(episode.video or "")
        assert video.parent == tmp_path / "run0.videos" and video.suffix == ".mp4"
        assert video.stat().st_size > 0
    assert sorted(p.name for p in (tmp_path / "run0.videos").iterdir()) == sorted(
        Path(e.video or "").name for t in result.tasks for e in t.episodes if e.video
    )
