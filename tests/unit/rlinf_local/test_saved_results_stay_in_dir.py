"""The embedded default keeps its results under DIR/results: an object key a Job chose never lands outside."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import boto3
from moto import mock_aws

from rlinf_local.embedded import Embedded


def test_keys_with_dot_dot_or_empty_segments_are_not_saved_outside_dir(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="local")
        s3.put_object(Bucket="local", Key="results/req/m1/libero_spatial/run0.json", Body=b"{}")
        s3.put_object(Bucket="local", Key="results/../../escaped.txt", Body=b"planted")
        s3.put_object(Bucket="local", Key="results/req//double.txt", Body=b"planted")
        emb = SimpleNamespace(
            aws=SimpleNamespace(client=lambda name: s3), stack=SimpleNamespace(bucket="local"), out=out
        )
        Embedded.save_results(emb)  # type: ignore[arg-type]
    assert (out / "results/req/m1/libero_spatial/run0.json").read_bytes() == b"{}"
    assert not (tmp_path / "escaped.txt").exists() and not (out.parent.parent / "escaped.txt").exists()
    assert [p.name for p in out.rglob("*") if p.is_file()] == ["run0.json"]
