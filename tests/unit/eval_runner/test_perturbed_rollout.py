"""Perturbed episodes in the rollout, with stand-in workers: each is recorded with what its start drew, beside
(never inside) the success rate, and one whose layout found no valid draw is recorded as refused, never played."""

from __future__ import annotations

import functools
from pathlib import Path

from eval_runner.envs.libero_scene import LiberoScenes
from eval_runner.progress import Progress
from eval_runner.result_writer import ResultWriter
from eval_runner.rollout import Rollout
from eval_runner.rollout_videos import RolloutVideos
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import Scheduler, plan_episodes
from eval_runner.settings import EvalSettings
from eval_runner.vector import WorkerConfig, WorkerHandle, close_all
from rlinf_bench.contracts import CheckpointRef, EvalRun, Provenance, RunStatus
from rlinf_bench.robustness import perturbed_episodes
from rlinf_bench.suites import get_suite
from tests.unit.eval_runner.fake_worker import FakeOptions, fake_worker
from tests.unit.eval_runner.test_async_batching import RowWise

SUITE = "libero_spatial"


def test_given_perturbed_episodes_then_each_is_kept_with_its_record_and_a_refused_one_is_never_played(
    tmp_path: Path,
) -> None:
    run = EvalRun(
        request_id="t",
        checkpoint=CheckpointRef(uri="", experiment="none", global_step=0),
        suite=SUITE,
        run_index=0,
        seed=3,
        task_ids=[0],
        trials_per_task=3,
        max_steps=8,
        workers=2,
        robustness={"axes": {"layout": [2], "noise": [0, 1]}, "states": 2},
    )
    policy = RowWise()
    builder = ResultBuilder(run, [get_suite(SUITE).task(0)], 8, 0, Provenance(host="test"))
    config = WorkerConfig(scenes=LiberoScenes(suite=SUITE, obs_spec=policy.obs_spec, horizon=8))
    target = functools.partial(fake_worker, FakeOptions(refuse_layout=True))
    handles = [WorkerHandle(i, config, "spawn", target=target) for i in range(2)]
    total = 3 + perturbed_episodes(run.robustness, 1, 3)
    progress = Progress(total, desc="t", enabled=False)
    try:
        Rollout(
            policy=policy,
            scheduler=Scheduler(plan_episodes(SUITE, run.seed, [0], 3, run.robustness)),
            workers=handles,
            builder=builder,
            writer=ResultWriter(str(tmp_path / "r.json")),
            settings=EvalSettings(progress=False),
            progress=progress,
            task_language={0: "do it"},
        ).run()
    finally:
        close_all(handles)
    task = builder.build(RunStatus.COMPLETE).tasks[0]

    assert total == 9 and builder.finished_all == 9 and builder.finished == 3
    assert [e.init_state for e in task.episodes] == [0, 1, 2]
    assert progress.done == 3  # the bar's success rate counts the standard episodes only
    assert progress.finished == progress.total == 9  # its count and its ETA count every episode
    played = [(e.init_state, e.perturbation.axis.value, e.perturbation.level) for e in task.perturbed]  # type: ignore[union-attr]
    assert played == [
        (0, "layout", 2),
        (0, "noise", 0),
        (0, "noise", 1),
        (1, "layout", 2),
        (1, "noise", 0),
        (1, "noise", 1),
    ]
    refused = [e for e in task.perturbed if e.perturbation.axis.value == "layout"]  # type: ignore[union-attr]
    assert all(not e.success and e.steps == 0 and "perturbation refused" in (e.error or "") for e in refused)
    assert "t0-s0-layout2-a0" not in policy.seen and "t0-s0-noise1-a0" in policy.seen
    assert all(e.perturbation.params == {"drawn": 1.0} for e in task.perturbed)  # type: ignore[union-attr]
    # a level-0 episode of the stand-in plays as its twin
    assert [list(r) for r in policy.seen["t0-s1-noise0-a0"]] == [list(r) for r in policy.seen["t0-s1-a0"]]


def test_given_videos_then_perturbed_episodes_record_theirs_beside_their_twins_under_names_with_axis_and_level(
    tmp_path: Path,
) -> None:
    # GIVEN a run of 2 initial states, both also played under camera 2 and noise 1, one video per task kept
    run = EvalRun(
        request_id="t",
        checkpoint=CheckpointRef(uri="", experiment="none", global_step=0),
        suite=SUITE,
        run_index=0,
        seed=3,
        task_ids=[0],
        trials_per_task=2,
        max_steps=4,
        workers=1,
        videos=1,
        robustness={"axes": {"camera": [2], "noise": [1]}, "states": 2},
    )
    policy = RowWise()
    builder = ResultBuilder(run, [get_suite(SUITE).task(0)], 4, 0, Provenance(host="test"))
    writer = ResultWriter(str(tmp_path / "run0.json"))
    config = WorkerConfig(scenes=LiberoScenes(suite=SUITE, obs_spec=policy.obs_spec, horizon=4))
    handles = [WorkerHandle(0, config, "spawn", target=functools.partial(fake_worker, FakeOptions()))]
    try:
        # WHEN it runs
        Rollout(
            policy=policy,
            scheduler=Scheduler(plan_episodes(SUITE, run.seed, [0], 2, run.robustness)),
            workers=handles,
            builder=builder,
            writer=writer,
            settings=EvalSettings(progress=False),
            progress=Progress(6, desc="t", enabled=False),
            task_language={0: "do it"},
            videos=RolloutVideos(1, tmp_path / "run0.videos", writer, builder),
        ).run()
    finally:
        close_all(handles)
    task = builder.build(RunStatus.COMPLETE).tasks[0]

    # THEN the standard episodes keep their one video and the perturbed ones one of their own, each file named
    # after its episode's axis and level, so no twin overwrites another's
    videos = tmp_path / "run0.videos"
    [standard] = [e for e in task.episodes if e.video]
    [twin] = [e for e in task.perturbed if e.video]
    assert twin.perturbation is not None
    tag = f"{twin.perturbation.axis.value}{twin.perturbation.level}"
    assert standard.video == str(videos / f"task00_init{standard.init_state:02d}.mp4")
    assert twin.video == str(videos / f"task00_init{twin.init_state:02d}_{tag}.mp4")
    assert sorted(p.name for p in videos.iterdir()) == sorted(Path(v).name for v in (standard.video, twin.video))
