"""The result is written atomically after every episode, locally or to S3 (throttled)."""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from eval_runner.result_writer import ResultWriter
from rlinf_bench.contracts import EpisodeResult, RunResult, RunStatus, TaskResult
from rlinf_bench.errors import ConfigError, StorageError


def _result(n: int, status: RunStatus = RunStatus.INCOMPLETE) -> RunResult:
    eps = [EpisodeResult(init_state=i, seed=i, success=i == 0, steps=3, wall_s=0.1) for i in range(n)]
    base = RunResult(
        suite="libero_spatial",
        run_index=0,
        seed=0,
        policy="builtin:zero",
        status=status,
        trials_per_task=4,
        max_steps=3,
        settle_steps=10,
    )
    return base.with_tasks([TaskResult.from_episodes(0, "t", 4, eps)])


def test_given_a_local_path_then_each_write_replaces_the_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "r.json"
    writer = ResultWriter(str(out))

    assert writer.write(_result(1))
    assert writer.write(_result(2))

    assert RunResult.load(out).episodes == 2
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.json"]  # no temp file left behind


def test_given_a_directory_as_output_then_the_error_suggests_a_file_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        ResultWriter(str(tmp_path))


def test_given_an_s3_output_then_writes_are_throttled_but_the_final_one_always_goes_out() -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="results")
        writer = ResultWriter("s3://results/req/libero_spatial/run0.json", s3_client=s3, min_interval_s=3600)

        assert writer.write(_result(1)) is True
        assert writer.write(_result(2)) is False  # too soon: skipped
        assert writer.write(_result(3, RunStatus.COMPLETE), final=True) is True

        body = s3.get_object(Bucket="results", Key="req/libero_spatial/run0.json")["Body"].read()
        assert RunResult.from_json(body).episodes == 3
        assert writer.sibling("videos/a.gif") == "s3://results/req/libero_spatial/videos/a.gif"


@pytest.mark.parametrize("uri", ["s3://", "s3://bucket", "s3://bucket/", "s3://bucket/dir/"])
def test_given_an_s3_uri_without_an_object_key_then_it_is_rejected(uri: str) -> None:
    with pytest.raises(ConfigError, match=f"output URI '{uri}' must name an object"):
        ResultWriter(uri)


def test_given_s3_failing_then_progress_snapshots_are_skipped_but_the_final_write_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")  # the bucket does not exist
        writer = ResultWriter("s3://missing-bucket/r.json", s3_client=s3, min_interval_s=0)

        assert writer.write(_result(1)) is False
        assert "could not upload the progress snapshot" in caplog.text
        with pytest.raises(StorageError, match=r"cannot write s3://missing-bucket/r\.json.*NoSuchBucket"):
            writer.write(_result(1, RunStatus.COMPLETE), final=True)


def test_given_a_previous_result_then_it_can_be_read_back_for_resuming(tmp_path: Path) -> None:
    local = ResultWriter(str(tmp_path / "r.json"))
    assert local.read_existing() is None
    local.write(_result(2))
    assert (
        local.read_existing() == RunResult.load(tmp_path / "r.json")
        and RunResult.load(tmp_path / "r.json").episodes == 2
    )

    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="results")
        remote = ResultWriter("s3://results/a/r.json", s3_client=s3)
        assert remote.read_existing() is None
        remote.write(_result(3), final=True)
        assert remote.read_existing().episodes == 3  # type: ignore[union-attr]
