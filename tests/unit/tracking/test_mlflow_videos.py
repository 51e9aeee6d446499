"""The report's videos as MLflow artifacts: one folder per suite and run, each file once, only what passes the
named-file reader (inside its run's folder, a video by content), and back from MLflow for `report`."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.reporting.episode_files import StoredRunFiles
from rlinf_tracking.mlflow_videos import report_videos, stage_videos
from tests.unit.reporting.sitefactory import two_checkpoints

MP4 = b"\x00\x00\x00\x18ftypmp42"


def test_given_recorded_videos_then_each_goes_under_its_suite_and_run_once(tmp_path: Path) -> None:
    video = tmp_path / "run0.videos" / "task00_init00.mp4"
    video.parent.mkdir()
    video.write_bytes(MP4)
    report = two_checkpoints(video)[1]

    listed = report_videos(report)

    # the factory records state 0's file in three runs and names a missing one for state 1
    assert [(v.artifact_path, v.uri) for v in listed][:2] == [
        ("videos/libero_spatial/run0", str(video)),
        ("videos/libero_spatial/run0", "/nonexistent/episode_1.mp4"),
    ]
    staged = stage_videos(report, tmp_path / "stage", StoredRunFiles())
    assert staged[0] == (tmp_path / "stage/videos/libero_spatial/run0/task00_init00.mp4", "videos/libero_spatial/run0")
    assert [folder for _, folder in staged] == [
        f"videos/libero_spatial/run{i}" for i in range(3)
    ]  # the missing one skipped
    assert staged[0][0].read_bytes() == video.read_bytes()


def test_a_video_field_naming_another_kind_of_file_is_neither_published_nor_copied(tmp_path: Path) -> None:
    secret = tmp_path / "credentials.mp4"
    secret.write_text("[default]\naws_secret_access_key = abc\n")
    report = two_checkpoints(secret)[1]
    assert stage_videos(report, tmp_path / "stage", StoredRunFiles()) == []
    assert not (tmp_path / "stage").exists()


def test_a_video_whose_content_is_a_gif_is_staged_as_a_gif(tmp_path: Path) -> None:
    video = tmp_path / "task00_init00.mp4"
    video.write_bytes(b"GIF89a" + b"\x00" * 16)
    staged = stage_videos(two_checkpoints(video)[1], tmp_path / "stage", StoredRunFiles())
    assert staged and all(path.name == "task00_init00.gif" for path, _ in staged)


def test_a_perturbed_episodes_video_is_published_beside_its_twins_under_its_own_name(tmp_path: Path) -> None:
    from tests.unit.reporting.robustfactory import robust_checkpoints

    # GIVEN a report whose run 0 recorded its twin's video and a failed camera level 2 episode's
    twin = tmp_path / "runs" / "task01_init00.mp4"
    perturbed = tmp_path / "runs" / "task01_init00_camera2.mp4"
    twin.parent.mkdir()
    twin.write_bytes(MP4 + b" twin")
    perturbed.write_bytes(MP4 + b" perturbed")
    report = robust_checkpoints(twin, perturbed)[1]

    # WHEN its videos are staged for MLflow
    staged = stage_videos(report, tmp_path / "stage", StoredRunFiles())

    # THEN both are there, each under its own name
    run0 = tmp_path / "stage/videos/libero_spatial/run0"
    assert {path for path, _ in staged} >= {run0 / "task01_init00.mp4", run0 / "task01_init00_camera2.mp4"}
    assert (run0 / "task01_init00_camera2.mp4").read_bytes() == perturbed.read_bytes()
