"""One addressing scheme for stored documents: local paths and s3:// URIs behave the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.document_store import (
    S3Location,
    Storage,
    StoredObjectMissingError,
    is_s3,
    join,
    parse_s3,
    write_atomic,
)
from rlinf_bench.errors import ConfigError, StorageError

BUCKET = "docs"


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


@pytest.fixture(params=["local", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Storage]]:
    """The same tests run against a local directory and an S3 prefix."""
    if request.param == "local":
        yield str(tmp_path / "store"), Storage()
    else:
        with mock_aws():
            client = boto3.client("s3", region_name="us-east-1")
            client.create_bucket(Bucket=BUCKET)
            yield f"s3://{BUCKET}/store", Storage(S3Objects(client))


def test_given_uris_then_they_parse_into_bucket_and_key() -> None:
    assert is_s3("s3://b/k") and not is_s3("/tmp/x") and not is_s3("gs://b/k")
    assert parse_s3("s3://b/a/b.json") == S3Location("b", "a/b.json")
    assert parse_s3("s3://b") == S3Location("b", "")
    assert S3Location("b", "a/b.json").uri == "s3://b/a/b.json" and S3Location("b", "").uri == "s3://b"


@pytest.mark.parametrize(
    ("uri", "need_key", "message"),
    [
        ("/local/file.json", False, r"--out '/local/file.json' is not an s3:// URI; write s3://BUCKET/KEY"),
        ("s3:///key", False, r"--out 's3:///key' has no bucket name; write s3://BUCKET/KEY"),
        ("s3://b", True, r"--out 's3://b' must name an object, e.g. s3://b/path/result.json"),
        ("s3://b/dir/", True, r"must name an object"),
        ("s3://", True, r"must name an object, e.g. s3://BUCKET/"),
    ],
)
def test_given_an_invalid_uri_then_the_error_names_the_input_and_the_form(
    uri: str, need_key: bool, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_s3(uri, what="--out", need_key=need_key)


def test_given_segments_then_join_adds_single_slashes() -> None:
    assert join("s3://b/req/", "/suite/", "run0.json") == "s3://b/req/suite/run0.json"
    assert join("/tmp/out", "", "a.json") == "/tmp/out/a.json"


def test_given_a_document_then_it_reads_back_as_written(root: tuple[str, Storage]) -> None:
    base, store = root
    uri = join(base, "req", "run0.json")

    assert store.write_json(uri, {"b": 1, "a": [1, 2]}) == uri
    store.write_text(join(base, "req", "note.txt"), "héllo")

    assert store.read_json(uri) == {"a": [1, 2], "b": 1}
    assert store.read_text(join(base, "req", "note.txt")) == "héllo"
    assert store.exists(uri) and not store.exists(join(base, "req", "run1.json"))


def test_given_a_prefix_then_list_keys_finds_every_document_below_it_sorted(root: tuple[str, Storage]) -> None:
    base, store = root
    for rel in ["b/run1.json", "a/run0.json", "a/deep/run2.json", "a/video.mp4"]:
        store.write_bytes(join(base, rel), b"{}")
    store.write_bytes(join(base + "-other", "x.json"), b"{}")  # a sibling prefix is not "under" base

    assert store.list_keys(base, suffix=".json") == [
        join(base, "a/deep/run2.json"),
        join(base, "a/run0.json"),
        join(base, "b/run1.json"),
    ]
    assert len(store.list_keys(base)) == 4
    assert store.list_keys(join(base, "nothing-here")) == []


def test_given_a_missing_document_then_the_error_names_it(root: tuple[str, Storage]) -> None:
    base, store = root
    uri = join(base, "missing.json")
    with pytest.raises(StoredObjectMissingError, match=f"{uri} does not exist"):
        store.read_json(uri)


def test_given_a_document_that_is_not_json_then_the_error_names_it(root: tuple[str, Storage]) -> None:
    base, store = root
    uri = store.write_text(join(base, "broken.json"), "{not json")
    with pytest.raises(StorageError, match=f"{uri} is not valid JSON"):
        store.read_json(uri)


def test_given_a_missing_bucket_then_reads_say_missing_and_writes_name_the_uri(s3: Any) -> None:
    store = Storage(S3Objects(s3))
    with pytest.raises(StoredObjectMissingError, match=r"s3://nobucket/a\.json does not exist"):
        store.read_bytes("s3://nobucket/a.json")
    with pytest.raises(StorageError, match=r"cannot write s3://nobucket/a\.json.*NoSuchBucket"):
        store.write_text("s3://nobucket/a.json", "x")


def test_given_an_s3_write_then_the_content_type_is_json(s3: Any) -> None:
    Storage(S3Objects(s3)).write_json(f"s3://{BUCKET}/r.json", '{"a": 1}')
    head = s3.head_object(Bucket=BUCKET, Key="r.json")
    assert head["ContentType"] == "application/json"
    assert s3.get_object(Bucket=BUCKET, Key="r.json")["Body"].read() == b'{"a": 1}'


def test_given_a_factory_then_the_client_is_built_once_and_only_when_s3_is_touched(s3: Any, tmp_path: Path) -> None:
    calls: list[int] = []

    def factory() -> Any:
        calls.append(1)
        return s3

    store = Storage(S3Objects(factory=factory))
    store.write_text(str(tmp_path / "local.txt"), "x")
    assert calls == []
    store.write_text(f"s3://{BUCKET}/a.txt", "x")
    store.read_text(f"s3://{BUCKET}/a.txt")
    assert calls == [1]


def test_given_an_atomic_write_then_no_temp_file_remains_and_the_old_content_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.json"
    write_atomic(path, b"one")
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_given_an_unwritable_target_then_the_error_names_it_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.mkdir()  # a directory where the file should go: the rename fails
    with pytest.raises(StorageError, match=f"cannot write {target}"):
        write_atomic(target, b"x")
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_given_a_file_where_a_folder_should_be_then_the_error_names_the_target(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StorageError, match=r"cannot write .*file/r\.json"):
        Storage().write_text(str(tmp_path / "file" / "r.json"), "x")
