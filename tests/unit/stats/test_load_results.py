"""RunResults and ProbeResults are read from local files and from S3 alike, and bad ones are named."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.contracts import Measurement, ProbeResult, ProbeVerdict
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import ContractError
from rlinf_bench.stats.aggregate import aggregate_checkpoint, load_probes, load_runs
from tests.unit.stats.runfactory import make_run

BUCKET = "results"


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def _probe() -> ProbeResult:
    return ProbeResult(
        probe="gpu", values={"util_update_pct": Measurement(value=81.0, unit="%")}, verdict=ProbeVerdict.PASS
    )


def test_given_runs_in_s3_and_on_disk_then_they_aggregate_into_one_report(s3: Any, tmp_path: Path) -> None:
    runs = [make_run({0: [1, 0, 1], 1: [1, 1, 0]}, run_index=i) for i in range(3)]
    uris = []
    for run in runs[:2]:
        key = f"req/libero_spatial/run{run.run_index}.json"
        s3.put_object(Bucket=BUCKET, Key=key, Body=run.to_json().encode())
        uris.append(f"s3://{BUCKET}/{key}")
    uris.append(str(runs[2].save(tmp_path / "run2.json")))

    loaded = load_runs(uris, storage=Storage(S3Objects(s3)))
    report = aggregate_checkpoint(loaded, runs_expected=3)

    assert [r.source for r in loaded] == uris
    assert [r.result for r in loaded] == runs
    assert report.complete and report.sources == uris


def test_given_a_missing_s3_result_then_the_error_names_its_uri(s3: Any) -> None:
    with pytest.raises(ContractError, match=f"RunResult s3://{BUCKET}/req/run9.json does not exist"):
        load_runs([f"s3://{BUCKET}/req/run9.json"], storage=Storage(S3Objects(s3)))


def test_given_an_invalid_s3_result_then_the_error_names_uri_and_field(s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key="req/bad.json", Body=b'{"suite": "libero_spatial"}')
    with pytest.raises(ContractError, match=rf"s3://{BUCKET}/req/bad.json is not a valid RunResult(.|\n)*run_index"):
        load_runs([f"s3://{BUCKET}/req/bad.json"], storage=Storage(S3Objects(s3)))


def test_given_probe_results_in_s3_and_on_disk_then_both_load(s3: Any, tmp_path: Path) -> None:
    probe = _probe()
    s3.put_object(Bucket=BUCKET, Key="req/probes/gpu.json", Body=probe.to_json().encode())
    local = str(probe.save(tmp_path / "gpu.json"))

    loaded = load_probes([f"s3://{BUCKET}/req/probes/gpu.json", local], storage=Storage(S3Objects(s3)))

    assert loaded == [probe, probe]
    with pytest.raises(ContractError, match=r"ProbeResult s3://results/req/probes/nccl\.json does not exist"):
        load_probes([f"s3://{BUCKET}/req/probes/nccl.json"], storage=Storage(S3Objects(s3)))
