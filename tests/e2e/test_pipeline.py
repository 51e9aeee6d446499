"""``rlinf-bench pipeline`` end to end: the stack from template.yaml in moto, real LIBERO Jobs, MLflow, outbox.

GIVEN a demo checkpoint and a tiny eval matrix, WHEN a user runs the pipeline, THEN the brief's MLflow query
finds the run, the report, the email and the Slack payload exist, and status lists the execution; a
checkpoint with truncated weights fails with one failure notice naming the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from rlinf_tracking import search_checkpoint_runs
from tests.e2e.conftest import copy_checkpoint, rlinf_bench, write_tiny_config
from tests.integration.workflow.conftest import MlflowServer

pytestmark = [pytest.mark.sim, pytest.mark.slow]


PROGRESS = re.compile(r"runs \d+/\d+ · (probes \d+/\d+ · )?episodes \d+/\d+ \(\d+ %\) · ")


def checkpoint_runs(tracking_uri: str) -> list[object]:
    client = MlflowClient(tracking_uri)
    if client.get_experiment_by_name("RLinf") is None:
        return []
    return [r for r in search_checkpoint_runs(client, "RLinf") if "success_rate" in r.data.metrics]


def assert_published(doc: dict, out: Path) -> None:
    assert set(doc) == {"executions", "tracking_uri", "report", "outbox", "failures"}
    (execution,) = doc["executions"]
    assert {"name", "status", "checkpoint"} <= set(execution)
    assert execution["status"] == "SUCCEEDED" and execution["runs_done"] == 1
    assert execution["checkpoint"]["global_step"] == 100 and execution["checkpoint"]["experiment"] == "demo"
    assert doc["failures"] == []
    assert Path(doc["report"]) == out.resolve() / "report" / "report.html"
    assert "global_step" in Path(doc["report"]).read_text() or "demo" in Path(doc["report"]).read_text()
    (email,) = doc["outbox"]["email"]
    assert Path(email).parent == out.resolve() / "outbox" / "email" and "global_step 100" in Path(email).read_text()
    (slack,) = doc["outbox"]["slack"]
    payload = json.loads(Path(slack).read_text())
    assert isinstance(payload["blocks"], list) and payload["blocks"]


def assert_videos_linked_and_logged(out: Path, tracking_uri: str) -> None:
    """The matrix's default videos: an H.264 MP4 at the demo policy's 64 px camera, embedded in the task page
    (copied next to it: the moto bucket is gone after the run) and an artifact of the MLflow parent run."""
    import re
    import subprocess

    import imageio_ffmpeg

    (task_page,) = (out / "report" / "checkpoints").glob("*/libero_spatial/task_0.html")
    # the recorded episode plays in the task's players and, being a failure, again beside its failure reason
    (src,) = set(re.findall(r'<video class="player"[^>]* src="([^"]+)"', task_page.read_text()))
    video = (task_page.parent / src).resolve()
    assert video.suffix == ".mp4" and video.is_relative_to(out.resolve() / "report")
    probe = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(video)], capture_output=True)
    assert "Video: h264" in probe.stderr.decode() and "64x64" in probe.stderr.decode()
    (run,) = checkpoint_runs(tracking_uri)
    logged = [a.path for a in MlflowClient(tracking_uri).list_artifacts(run.info.run_id, "videos/libero_spatial/run0")]
    assert logged == ["videos/libero_spatial/run0/task00_init00.mp4"]


def test_pipeline_publishes_a_demo_checkpoint_to_mlflow_the_report_email_and_slack(
    demo_checkpoint: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    config = write_tiny_config(tmp_path / "tiny-videos.yaml", tmp_path / "scratch", videos=None)  # default videos
    cli = rlinf_bench(
        "pipeline", "--checkpoint", str(demo_checkpoint), "--config", str(config), "--out", str(out), "--json"
    )
    assert cli.returncode == 0, cli.stderr[-3000:]
    doc = cli.json()
    assert_published(doc, out)
    assert doc["tracking_uri"] == f"sqlite:///{out.resolve() / 'mlflow.db'}"
    assert len(checkpoint_runs(doc["tracking_uri"])) == 1  # the brief's query finds the run
    assert "adaptations of template.yaml for moto; -v lists them" in cli.stderr  # the moto adaptations, counted
    assert not PROGRESS.search(cli.stderr)  # --json: no progress line
    assert_videos_linked_and_logged(out, doc["tracking_uri"])
    status = rlinf_bench("status", "--out", str(out), "--json")
    assert status.returncode == 0, status.stderr
    (listed,) = status.json()["executions"]
    assert listed["status"] == "SUCCEEDED" and listed["runs_done"] == 1 and listed["verdict"]


def test_pipeline_publishes_to_an_mlflow_server_over_http(
    demo_checkpoint: Path, tiny_config: Path, tmp_path: Path
) -> None:
    server = MlflowServer(tmp_path / "mlflow-server")
    server.root.mkdir()
    server.start()
    try:
        out = tmp_path / "out"
        cli = rlinf_bench(
            "pipeline",
            "--checkpoint",
            str(demo_checkpoint),
            "--config",
            str(tiny_config),
            "--out",
            str(out),
            "--tracking-uri",
            server.uri,
        )
        assert cli.returncode == 0, cli.stderr[-3000:]
        # Without --json a person sees progress (on stderr) while it runs, and stdout has no library log lines.
        assert PROGRESS.search(cli.stderr), cli.stderr[-3000:]
        assert '"level"' not in cli.stdout and "report.html" in cli.stdout
        status = rlinf_bench("status", "--out", str(out), "--json")
        (listed,) = status.json()["executions"]
        assert listed["status"] == "SUCCEEDED" and listed["runs_done"] == 1
        assert len(checkpoint_runs(server.uri)) == 1
        assert not (out / "mlflow.db").exists()  # nothing went to the local store
        assert not list(out.rglob("*.mp4"))  # the tiny budget says videos: 0: none recorded
    finally:
        server.stop()


def test_truncated_weights_are_refused_before_the_stack_is_built_naming_the_users_file(
    demo_checkpoint: Path, tiny_config: Path, tmp_path: Path
) -> None:
    """The policy is built on the checkpoint before anything starts (as the eval Job would build it): a truncated
    weights file fails in seconds, naming the user's file, instead of failing every eval Job after the stack,
    the probes and the Jobs' start-up. (A Job that fails later sends one failure notice: the workflow tests.)"""
    ckpt = copy_checkpoint(demo_checkpoint, tmp_path / "runs", step=100)
    weights = ckpt / "actor" / "model_state_dict" / "full_weights.pt"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    out = tmp_path / "out"
    cli = rlinf_bench("pipeline", "--checkpoint", str(ckpt), "--config", str(tiny_config), "--out", str(out), "--json")
    assert cli.returncode == 2, cli.stderr[-3000:]
    assert str(weights) in cli.stderr and "truncated" in cli.stderr
    assert cli.stdout == "" and not (out / "state.json").exists() and not (out / "outbox").exists()
