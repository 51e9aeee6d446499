"""`rlinf-bench report` rebuilt from MLflow restores the task pages' videos from the parent runs' artifacts,
through the same checks as any file a result names, and the one entry page it prints drills down to them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlinf_cli.main import main
from rlinf_tracking import publish_checkpoint
from tests.unit.reporting.sitefactory import two_checkpoints

MP4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + b"frames of run 0"


def test_videos_published_to_mlflow_come_back_on_the_task_pages_after_the_originals_are_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    video = tmp_path / "results" / "run0.videos" / "task00_init00.mp4"
    video.parent.mkdir(parents=True)
    video.write_bytes(MP4)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    client.create_experiment("RLinf", artifact_location=str(tmp_path / "artifacts"))
    before, now = two_checkpoints(video)
    pid = publish_checkpoint(now, client=client, out_dir=tmp_path / "pub", history=[before])
    # A copy tampered with in the artifact store (text under a video's name) is refused, not copied.
    # (the factory names a second video for state 1, episode_1.mp4, that was never recorded)
    client.log_artifact(pid, str(_text_file(tmp_path / "fake" / "episode_1.mp4")), "videos/libero_spatial/run1")
    video.unlink()  # the results are gone (the embedded default's in-memory bucket): MLflow has the copy

    out = tmp_path / "site"
    assert main(["report", "--tracking-uri", uri, "--out", str(out)]) == 0

    printed = capsys.readouterr().out.splitlines()
    assert str(out / "report.html") in printed and not any(line.endswith("index.html") for line in printed)
    entry = (out / "report.html").read_text()
    assert 'href="checkpoints/exp-step_200.html"' in entry
    task = (out / "checkpoints/exp-step_200/libero_spatial/task_0.html").read_text()
    players = re.findall(r'<video class="player" controls preload="metadata" src="([^"]+)">', task)
    assert len(players) == 1
    assert (out / "checkpoints/exp-step_200/libero_spatial" / players[0]).resolve().read_bytes() == MP4
    assert task.count('class="video"') == 3  # state 0 in each of the three runs
    assert task.count("is not among the videos of MLflow run") == 2  # state 1's video was never recorded
    assert task.count("not a recognised media file") == 1  # run 1's tampered copy


def _text_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("aws_secret_access_key = not-a-video\n")
    return path
