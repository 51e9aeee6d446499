"""The report's videos as MLflow artifacts: one folder per suite and run, each file once, unreadable ones skipped."""

from __future__ import annotations

from pathlib import Path

from rlinf_tracking.mlflow_videos import local_videos, report_videos, stage_videos
from tests.unit.reporting.sitefactory import two_checkpoints


def test_given_recorded_videos_then_each_goes_under_its_suite_and_run_once(tmp_path: Path) -> None:
    video = tmp_path / "run0.videos" / "task00_init00.mp4"
    video.parent.mkdir()
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42")
    report = two_checkpoints(video)[1]

    listed = report_videos(report)

    # the factory records state 0's file in three runs and names a missing one for state 1
    assert [(v.artifact_path, v.name) for v in listed] == [
        ("videos/libero_spatial/run0", "task00_init00.mp4"),
        ("videos/libero_spatial/run0", "episode_1.mp4"),
    ]
    assert local_videos(report) == [(video, "videos/libero_spatial/run0")]  # the missing one is skipped
    staged = stage_videos(report, tmp_path / "stage")
    assert staged == [(tmp_path / "stage/videos/libero_spatial/run0/task00_init00.mp4", "videos/libero_spatial/run0")]
    assert staged[0][0].read_bytes() == video.read_bytes()


def test_a_video_field_naming_another_kind_of_file_is_neither_published_nor_copied(tmp_path: Path) -> None:
    from rlinf_bench.reporting.site import local_video

    secret = tmp_path / "credentials"
    secret.write_text("key")
    report = two_checkpoints(secret)[1]
    assert [v.name for v in report_videos(report)] == ["episode_1.mp4"]  # the missing .mp4 only
    assert local_videos(report) == [] and local_video(str(secret)) is None
