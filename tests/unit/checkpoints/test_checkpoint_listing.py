"""Listings below a checkpoint location: an S3 prefix through the object store passed in, or a local folder;
backfill discovery lists through the same lister."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rlinf_bench.checkpoints.discovery import discover_checkpoints
from rlinf_bench.checkpoints.listing import CheckpointLister
from rlinf_bench.errors import StorageError
from rlinf_bench.ports import ObjectInfo

T0 = datetime(2026, 12, 1, tzinfo=UTC)


class MemoryObjects:
    """An object store in memory: enough of the interface for listings, recording the prefixes asked for."""

    def __init__(self, bucket: str, keys: list[str]) -> None:
        self.bucket, self.keys = bucket, keys
        self.asked: list[str] = []

    def list_prefix(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]:
        self.asked.append(prefix)
        for key in self.keys if bucket == self.bucket else []:
            if key.startswith(prefix):
                yield ObjectInfo(key, len(key), T0, etag=f"e-{len(key)}")

    def read_object(self, bucket: str, key: str, *, max_bytes: int | None = None) -> bytes:
        raise NotImplementedError

    def write_object(self, bucket: str, key: str, data: bytes, *, content_type: str) -> None:
        raise NotImplementedError

    def object_exists(self, bucket: str, key: str) -> bool:
        return key in self.keys


ROOT = "runs/exp/checkpoints/global_step_10"


def test_given_an_s3_root_then_names_are_relative_to_it_with_size_and_etag_and_siblings_are_not_listed() -> None:
    objects = MemoryObjects("b", [f"{ROOT}/actor/model.pt", f"{ROOT}0/actor/model.pt", "other/actor/x"])

    listed = CheckpointLister(objects).list(f"s3://b/{ROOT}/")

    assert [(o.relative, o.size, o.etag) for o in listed] == [
        ("actor/model.pt", len(f"{ROOT}/actor/model.pt"), f"e-{len(f'{ROOT}/actor/model.pt')}")
    ]
    assert objects.asked == [f"{ROOT}/"]  # global_step_100 is not under global_step_10


def test_given_a_local_folder_then_its_files_are_listed_and_a_missing_one_is_empty(tmp_path: Path) -> None:
    (tmp_path / "actor" / "model").mkdir(parents=True)
    (tmp_path / "actor" / "model" / "w.safetensors").write_bytes(b"123")

    [stored] = CheckpointLister().list(str(tmp_path))

    assert (stored.relative, stored.size, stored.etag) == ("actor/model/w.safetensors", 3, "")
    assert CheckpointLister().list(str(tmp_path / "missing")) == []


def test_given_no_object_store_then_an_s3_location_is_refused_naming_it() -> None:
    with pytest.raises(StorageError, match=r"cannot list s3://b/x: this process was given no S3 access"):
        CheckpointLister().list("s3://b/x")


def test_given_a_bucket_then_discovery_lists_it_once_through_the_store_and_finds_each_root_once() -> None:
    keys = [f"{ROOT}/actor/model.pt", f"{ROOT}/actor/optim.pt", "runs/exp/checkpoints/global_step_2/actor/model.pt"]
    objects = MemoryObjects(
        "b", [*keys, "runs/exp/checkpoints/global_step_x/actor/model.pt"]
    )  # a step that is no number

    found = discover_checkpoints("s3://b", objects=objects)

    assert [(r.uri, r.global_step) for r in found] == [
        ("s3://b/runs/exp/checkpoints/global_step_2", 2),
        (f"s3://b/{ROOT}", 10),
    ]
    assert objects.asked == [""]
