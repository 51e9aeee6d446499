"""A real LIBERO rollout through the whole runner produces a complete, schema-valid RunResult."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import jsonschema
import pytest
from moto import mock_aws

from eval_runner.loop import evaluate
from rlinf_bench.contracts import RunResult, RunStatus
from tests.sim.helpers import REPO, make_run, settings


def ffprobe(path: Path) -> str:
    """The streams of a video as ffmpeg (imageio-ffmpeg's static binary) describes them."""
    import subprocess

    import imageio_ffmpeg

    done = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)], capture_output=True)
    return done.stderr.decode()


pytestmark = pytest.mark.sim


def test_given_one_task_one_trial_when_evaluated_then_the_result_is_complete_schema_valid_and_traceable(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "result.json"
    snapshots: list[RunResult] = []

    result = evaluate(
        make_run(), out_path=out, settings=settings(libero_cache), command=["test"], on_episode=snapshots.append
    )

    on_disk = json.loads(out.read_text())
    jsonschema.validate(on_disk, json.loads((REPO / "docs/schemas/run-result.schema.json").read_text()))
    assert RunResult.load(out) == result
    assert result.status is RunStatus.COMPLETE and result.error is None
    [task] = result.tasks
    assert task.task_name == "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate"
    assert task.language == "pick up the black bowl between the plate and the ramekin and place it on the plate"
    [episode] = task.episodes
    # The zero policy never moves the arm: the episode runs to the horizon and fails.
    assert (episode.steps, episode.success, episode.retries) == (5, False, 0)
    assert episode.seed == 0  # the run seed: env.seed(0) once per task, as OpenVLA-OFT
    assert (result.max_steps, result.settle_steps) == (5, 10)
    assert result.timings.env_steps == 5 and result.timings.policy_calls == 5
    assert result.timings.env_setup_s > 0 and result.timings.sim_s > 0
    prov = result.provenance
    assert prov.packages["rlinf-libero"] == "0.1.3" and "mujoco" in prov.packages and "robosuite" in prov.packages
    assert prov.rendering_backend.startswith("egl") and prov.command == ["test"] and prov.cpu_count >= 1
    assert prov.extra["throughput"]["policy_calls_per_vector_step"] == 1.0
    # after its episode, and before the final write, the run reported itself in progress
    assert [(s.status, s.episodes) for s in snapshots] == [(RunStatus.INCOMPLETE, 1)]


def test_given_an_s3_output_and_videos_then_result_and_video_land_in_the_bucket(
    tmp_path: Path, libero_cache: Path
) -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="results")

        result = evaluate(
            make_run(videos=1, max_steps=3),
            out_path="s3://results/req/libero_spatial/run0.json",
            settings=settings(libero_cache),
            s3_client=s3,
        )

        body = s3.get_object(Bucket="results", Key="req/libero_spatial/run0.json")["Body"].read()
        assert RunResult.from_json(body) == result and result.status is RunStatus.COMPLETE
        video = result.tasks[0].episodes[0].video
        assert video == "s3://results/req/libero_spatial/run0.videos/task00_init00.mp4"  # a folder per run
        key = video.removeprefix("s3://results/")
        assert s3.head_object(Bucket="results", Key=key)["ContentLength"] > 1000
        # builtin:zero renders no camera: its video is at the protocol's 256 px, not the policy class's 128
        local = tmp_path / "v.mp4"
        local.write_bytes(s3.get_object(Bucket="results", Key=key)["Body"].read())
        streams = ffprobe(local)
        assert "Video: h264" in streams and "256x256" in streams
