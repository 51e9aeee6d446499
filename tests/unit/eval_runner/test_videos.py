"""Episode videos: H.264 MP4 at the rendered size, and which episodes keep one (failures first, then successes)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.perturbations.draw import AxisLevel
from eval_runner.result_writer import ResultWriter
from eval_runner.rollout_videos import RolloutVideos
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import EpisodeTask
from eval_runner.video import write_video
from eval_runner.video_selection import SEARCH_FACTOR, VideoSelector
from rlinf_bench.contracts import CheckpointRef, EpisodeResult, EvalRun, PerturbationAxis, Provenance
from rlinf_bench.errors import ConfigError
from rlinf_bench.robustness import perturbation_record


def _probe(path: Path) -> str:
    import imageio_ffmpeg

    # ffmpeg with no output file prints the input's streams on stderr (and exits 1)
    done = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)], capture_output=True)
    return done.stderr.decode()


def test_given_camera_frames_then_an_h264_mp4_of_that_size_is_written_that_reads_back(tmp_path: Path) -> None:
    import imageio.v2 as imageio

    frames = [np.full((256, 256, 3), i * 8, np.uint8) for i in range(30)]

    written = write_video(tmp_path / "v" / "task00_init00", frames)

    assert written == tmp_path / "v" / "task00_init00.mp4"
    streams = _probe(written)
    assert "Video: h264" in streams and "yuv420p" in streams and "256x256" in streams and "20 fps" in streams
    reader = imageio.get_reader(written, format="FFMPEG")  # type: ignore[arg-type]
    assert reader.count_frames() == 30 and reader.get_data(0).shape == (256, 256, 3)
    with pytest.raises(ConfigError, match="no frames"):
        write_video(tmp_path / "empty", [])


def test_given_an_even_size_that_is_not_a_multiple_of_16_then_it_is_kept(tmp_path: Path) -> None:
    assert "200x200" in _probe(write_video(tmp_path / "a", [np.zeros((200, 200, 3), np.uint8)] * 3))


def test_failures_are_kept_first_and_displace_successes_up_to_n_per_task() -> None:
    sel = VideoSelector(2)
    assert sel.wants(0)
    assert sel.offer(0, 0, success=True).keep and sel.offer(0, 1, success=True).keep
    assert not sel.offer(0, 2, success=True).keep  # full: a success never displaces
    assert sel.wants(0)  # a failure could still replace a success
    first = sel.offer(0, 3, success=False)
    assert first.keep and first.displaced == 1  # the latest success goes
    second = sel.offer(0, 4, success=False)
    assert second.keep and second.displaced == 0
    assert sel.kept(0) == [3, 4] and not sel.wants(0)  # two failures: nothing can improve, stop recording
    assert sel.wants(1) and sel.kept(1) == []  # per task


def test_a_failure_with_a_reason_no_kept_video_shows_displaces_one_whose_reason_repeats() -> None:
    sel = VideoSelector(2)
    assert sel.offer(0, 0, success=False, reason="dropped").keep
    assert sel.offer(0, 1, success=False, reason="dropped").keep
    assert sel.wants(0)  # two videos of one reason: keep recording, looking for another
    assert not sel.offer(0, 2, success=False, reason="dropped").keep
    other = sel.offer(0, 3, success=False, reason="grasp_failed")
    assert other.keep and other.displaced == 1  # the later of the two drops goes
    assert sel.kept(0) == [0, 3] and not sel.wants(0)  # one video per reason: nothing can improve


def test_the_search_for_another_reason_is_bounded() -> None:
    sel = VideoSelector(1)
    sel.offer(0, 0, success=False, reason="dropped")
    assert not sel.wants(0)  # one video, one reason: nothing repeats
    sel = VideoSelector(2)
    for state in range(SEARCH_FACTOR * 2):
        assert sel.wants(0)
        sel.offer(0, state, success=False, reason="dropped")
    assert not sel.wants(0)


def test_a_resumed_runs_videos_count_and_are_never_displaced() -> None:
    sel = VideoSelector(1)
    sel.seed(0, 5, success=True)
    assert not sel.offer(0, 6, success=False).keep  # the earlier attempt's file stays as it is
    assert sel.kept(0) == [5]


def test_zero_videos_records_none() -> None:
    assert not VideoSelector(0).wants(0)


class _Worker:
    """A worker handle whose 'video' message writes a small MP4, as the real worker does."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def send(self, msg: tuple[Any, ...]) -> None:
        self.sent.append(msg)

    def recv(self) -> tuple[Any, ...]:
        path = write_video(Path(self.sent[-1][1]), [np.zeros((32, 32, 3), np.uint8)] * 2)
        return ("ok", str(path))


def _builder() -> ResultBuilder:
    run = EvalRun(
        request_id="r",
        checkpoint=CheckpointRef(uri="", experiment="none", global_step=0),
        suite="libero_spatial",
        run_index=0,
        seed=0,
        videos=2,
    )
    return ResultBuilder(run=run, tasks=[], max_steps=5, settle_steps=0, provenance=Provenance())


def test_the_rollout_keeps_failures_first_and_deletes_a_displaced_video(tmp_path: Path) -> None:
    builder = _builder()
    writer = ResultWriter(str(tmp_path / "run0.json"))
    videos = RolloutVideos(2, tmp_path / "run0.videos", writer, builder)
    worker: Any = _Worker()
    for init_state, success in [(0, True), (1, True), (2, False), (3, True), (4, False)]:
        ep = videos.plan(EpisodeTask(task_id=0, init_state=init_state, seed=0))
        assert ep.record_video
        video = videos.finish(worker, ep, success)
        builder.add(0, EpisodeResult(init_state=init_state, seed=0, success=success, steps=5, wall_s=0.1, video=video))
    with_video = {e.init_state: e.video for e in builder.episodes[0] if e.video}
    assert sorted(with_video) == [2, 4]  # both failures, no success
    assert sorted(p.name for p in (tmp_path / "run0.videos").iterdir()) == ["task00_init02.mp4", "task00_init04.mp4"]
    assert not videos.plan(EpisodeTask(task_id=0, init_state=5, seed=0)).record_video


def test_perturbed_twins_keep_videos_of_their_own_and_a_displaced_one_is_cleared_in_the_perturbed_list(
    tmp_path: Path,
) -> None:
    builder = _builder()
    writer = ResultWriter(str(tmp_path / "run0.json"))
    videos = RolloutVideos(1, tmp_path / "run0.videos", writer, builder)
    worker: Any = _Worker()
    # GIVEN state 0 played standard (a success), then under camera 2 (a success) and under light 2 (a failure)
    for axis, success in [(None, True), (PerturbationAxis.CAMERA, True), (PerturbationAxis.LIGHT, False)]:
        drawn = AxisLevel(axis, 2) if axis is not None else None
        ep = videos.plan(EpisodeTask(task_id=0, init_state=0, seed=0, perturbation=drawn))
        assert ep.record_video
        # WHEN each ends
        video = videos.finish(worker, ep, success, None if success else "dropped")
        record = perturbation_record(axis, 2) if axis is not None else None
        builder.add(
            0,
            EpisodeResult(init_state=0, seed=0, success=success, steps=5, wall_s=0.1, video=video, perturbation=record),
        )
    # THEN the standard episode keeps its video beside the perturbed ones' (a budget of their own), the light
    # failure displaced the camera success, and only the displaced file and field are gone
    assert builder.episodes[0][0].video == str(tmp_path / "run0.videos" / "task00_init00.mp4")
    assert [e.video for e in builder.perturbed[0]] == [None, str(tmp_path / "run0.videos" / "task00_init00_light2.mp4")]
    assert sorted(p.name for p in (tmp_path / "run0.videos").iterdir()) == [
        "task00_init00.mp4",
        "task00_init00_light2.mp4",
    ]
