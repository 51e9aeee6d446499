"""List what is stored below a checkpoint location: an ``s3://`` prefix through the object store the caller
passes in (:class:`rlinf_bench.ports.ObjectStore`), or a local directory through the file system.

The intake's completeness check, the backfill's discovery and the eval Job's download all list through
:class:`CheckpointLister`, so a listing means the same everywhere: names relative to the root, '/'-separated,
with their size, time and version tag.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from rlinf_bench.checkpoints.keys import split_uri
from rlinf_bench.errors import StorageError
from rlinf_bench.ports import ObjectStore

__all__ = ["CheckpointLister", "ObjectLister", "StoredObject"]


@dataclass(frozen=True)
class StoredObject:
    """One object under a checkpoint root."""

    relative: str  # path below the root, '/'-separated
    size: int
    last_modified: datetime
    etag: str = ""  # the store's version tag of the content ('' for local files)


class ObjectLister(Protocol):
    """Lists every object below a checkpoint root (S3 prefix or local directory)."""

    def list(self, root_uri: str) -> list[StoredObject]: ...


class CheckpointLister:
    """Lists ``s3://bucket/prefix/`` through ``objects`` and a local directory (files only; directories are
    the local form of markers) through the file system. Without ``objects`` an S3 location is refused."""

    def __init__(self, objects: ObjectStore | None = None) -> None:
        self.objects = objects

    def list(self, root_uri: str) -> list[StoredObject]:
        bucket, prefix = split_uri(root_uri)
        if not bucket:
            return _local(Path(prefix))
        if self.objects is None:
            raise StorageError(f"cannot list {root_uri}: this process was given no S3 access (an object store)")
        start = f"{prefix}/" if prefix else ""
        # A bucket that is not there raises StorageLocationError (permanent); throttling and timeouts propagate.
        return [
            StoredObject(o.key[len(start) :], o.size, o.last_modified, o.etag)
            for o in self.objects.list_prefix(bucket, start)
        ]


def _local(root: Path) -> list[StoredObject]:
    if not root.is_dir():
        return []
    out: list[StoredObject] = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            st = path.stat()
            out.append(
                StoredObject(path.relative_to(root).as_posix(), st.st_size, datetime.fromtimestamp(st.st_mtime, UTC))
            )
    return out
