"""The core's object store on S3 (moto): pages are followed, and S3's answers become the interface's errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.errors import StorageLocationError, StoredObjectMissingError

BUCKET = "objects"


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def test_given_more_objects_than_one_page_then_every_one_is_listed_with_its_size_and_etag(s3: Any) -> None:
    for i in range(1005):  # S3 answers 1,000 keys a page
        s3.put_object(Bucket=BUCKET, Key=f"p/{i:04d}", Body=b"x" * (i % 3))
    s3.put_object(Bucket=BUCKET, Key="q/outside", Body=b"x")

    listed = list(S3Objects(s3).list_prefix(BUCKET, "p/"))

    assert len(listed) == 1005 and listed[7].key == "p/0007" and listed[7].size == 1
    assert listed[7].etag and '"' not in listed[7].etag


@pytest.mark.parametrize("bucket", ["no-such-bucket", "Not_A_Bucket"])
def test_given_a_bucket_that_is_not_there_or_cannot_be_one_then_listing_says_no_retry_helps(
    s3: Any, bucket: str
) -> None:
    with pytest.raises(StorageLocationError, match=rf"s3://{bucket}/p/ cannot be listed"):
        list(S3Objects(s3).list_prefix(bucket, "p/"))


def test_given_objects_then_reads_are_whole_or_bounded_and_a_missing_one_says_so(s3: Any) -> None:
    objects = S3Objects(s3)
    objects.write_object(BUCKET, "a.json", b"0123456789", content_type="application/json")
    objects.write_object(BUCKET, "empty", b"", content_type="application/octet-stream")

    assert objects.read_object(BUCKET, "a.json") == b"0123456789"
    assert objects.read_object(BUCKET, "a.json", max_bytes=3) == b"0123"  # one byte past the bound, no more
    assert objects.read_object(BUCKET, "empty", max_bytes=3) == b""  # S3 refuses a range of an empty object
    assert objects.object_exists(BUCKET, "a.json") and not objects.object_exists(BUCKET, "b.json")
    with pytest.raises(StoredObjectMissingError, match=r"s3://objects/b\.json does not exist \(NoSuchKey\)"):
        objects.read_object(BUCKET, "b.json")


def test_given_a_file_then_it_goes_up_down_and_away(s3: Any, tmp_path: Path) -> None:
    objects = S3Objects(s3)
    (tmp_path / "v.mp4").write_bytes(b"video")

    objects.upload_object(tmp_path / "v.mp4", BUCKET, "r/v.mp4")
    objects.download_object(BUCKET, "r/v.mp4", tmp_path / "back.mp4")
    objects.remove_object(BUCKET, "r/v.mp4")

    assert (tmp_path / "back.mp4").read_bytes() == b"video"
    assert not objects.object_exists(BUCKET, "r/v.mp4")


def test_given_no_client_then_one_is_built_on_first_use_only(s3: Any) -> None:
    built: list[Any] = []

    def factory() -> Any:
        built.append(s3)
        return s3

    objects = S3Objects(factory=factory)
    assert built == []
    objects.write_object(BUCKET, "k", b"v", content_type="text/plain")
    assert objects.read_object(BUCKET, "k") == b"v" and len(built) == 1
