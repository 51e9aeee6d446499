"""Perturbed episodes in the rollout, with stand-in workers: each is recorded with what its start drew, beside
(never inside) the success rate, and one whose layout found no valid draw is recorded as refused, never played."""

from __future__ import annotations

from pathlib import Path

from eval_runner.progress import Progress
from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.robustness import perturbed_episodes
from tests.unit.eval_runner.fake_worker import FakeOptions
from tests.unit.eval_runner.test_async_batching import rollout


def test_given_perturbed_episodes_then_each_is_kept_with_its_record_and_a_refused_one_is_never_played(
    tmp_path: Path,
) -> None:
    spec = RobustnessSpec.model_validate({"axes": {"layout": [2], "noise": [0, 1]}, "states": 2})
    total = 3 + perturbed_episodes(spec, 1, 3)
    progress = Progress(total, desc="t", enabled=False)
    result, builder, policy = rollout(
        tmp_path, 2, trials=3, max_steps=8, options=FakeOptions(refuse_layout=True), robustness=spec, progress=progress
    )
    task = result.tasks[0]

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
    spec = RobustnessSpec.model_validate({"axes": {"camera": [2], "noise": [1]}, "states": 2})
    # WHEN it runs
    result, _, _ = rollout(tmp_path, 1, trials=2, max_steps=4, videos=1, robustness=spec)
    task = result.tasks[0]

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
