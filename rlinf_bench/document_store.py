"""One way to address stored documents: a local path or an ``s3://bucket/key`` URI.

Results, reports and configs move between a laptop, an eval Job and a Lambda; each of them names a
document by a string. This module is the only place that tells a local path from an S3 URI, so the
rules (what a valid URI is, atomic local writes, what a missing object looks like) are the same
everywhere. Local paths are read and written here; ``s3://`` URIs go through the
:class:`~rlinf_bench.ports.ObjectStore` the caller passes in (``rlinf_aws.s3_objects.S3Objects`` on AWS and
in the Jobs). Without one, an S3 URI is refused with an error that says so: the core builds no client.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlinf_bench.errors import ConfigError, StorageError, StoredObjectMissingError
from rlinf_bench.ports import ObjectStore

__all__ = [
    "S3Location",
    "Storage",
    "is_s3",
    "join",
    "parse_s3",
    "write_atomic",
]

S3_SCHEME = "s3://"


@dataclass(frozen=True)
class S3Location:
    """A parsed ``s3://bucket/key`` URI (``key`` may be a prefix)."""

    bucket: str
    key: str

    @property
    def uri(self) -> str:
        return f"{S3_SCHEME}{self.bucket}/{self.key}" if self.key else f"{S3_SCHEME}{self.bucket}"


def is_s3(uri: str) -> bool:
    """Whether ``uri`` names an S3 object or prefix."""
    return uri.startswith(S3_SCHEME)


def parse_s3(uri: str, *, what: str = "URI", need_key: bool = False) -> S3Location:
    """``s3://bucket/a/b`` -> S3Location("bucket", "a/b"); errors name ``what`` and the expected form."""
    if not is_s3(uri):
        raise ConfigError(f"{what} {uri!r} is not an s3:// URI; write s3://BUCKET/KEY")
    bucket, _, key = uri[len(S3_SCHEME) :].partition("/")
    if need_key and (not bucket or not key or key.endswith("/")):
        raise ConfigError(f"{what} {uri!r} must name an object, e.g. s3://{bucket or 'BUCKET'}/path/result.json")
    if not bucket:
        raise ConfigError(f"{what} {uri!r} has no bucket name; write s3://BUCKET/KEY")
    return S3Location(bucket, key)


def join(base: str, *parts: str) -> str:
    """Join path segments onto a local path or an S3 URI with '/' (no doubled slashes)."""
    out = base.rstrip("/")
    for part in parts:
        if part:
            out = f"{out}/{part.strip('/')}"
    return out


class Storage:
    """Reads and writes documents by URI (a :class:`~rlinf_bench.ports.DocumentStore`): local paths here,
    ``s3://`` URIs through ``objects``; without an object store an S3 URI raises a StorageError saying so."""

    def __init__(self, objects: ObjectStore | None = None) -> None:
        self._objects = objects

    @property
    def objects(self) -> ObjectStore | None:
        """The object store ``s3://`` URIs go through (None: local paths only)."""
        return self._objects

    def _store(self, uri: str) -> ObjectStore:
        if self._objects is None:
            raise StorageError(
                f"cannot reach {uri}: this process was given no S3 access (an object store); pass "
                "Storage(rlinf_aws.s3_objects.S3Objects()) where it is built"
            )
        return self._objects

    # -- reading ------------------------------------------------------------------------------
    def read_bytes(self, uri: str, *, max_bytes: int | None = None) -> bytes:
        """The stored bytes; :class:`StoredObjectMissingError` names ``uri`` when it is absent. With ``max_bytes``
        at most ``max_bytes + 1`` bytes are read, so a caller can refuse a document over its bound."""
        if is_s3(uri):
            loc = parse_s3(uri, need_key=True)
            store = self._store(uri)
            try:
                return store.read_object(loc.bucket, loc.key, max_bytes=max_bytes)
            except StoredObjectMissingError as exc:
                raise StoredObjectMissingError(f"{uri} does not exist") from exc
            except Exception as exc:  # the store's refusal (access denied) or a transient error (endpoint, throttling)
                raise StorageError(f"cannot read {uri}: {exc}") from exc
        try:
            if max_bytes is None:
                return Path(uri).read_bytes()
            with Path(uri).open("rb") as f:
                return f.read(max_bytes + 1)
        except FileNotFoundError as exc:
            raise StoredObjectMissingError(f"{uri} does not exist") from exc
        except OSError as exc:
            raise StorageError(f"cannot read {uri}: {exc}") from exc

    def read_text(self, uri: str) -> str:
        return self.read_bytes(uri).decode("utf-8")

    def read_json(self, uri: str) -> Any:
        """Parse a JSON document; a syntax error names ``uri``."""
        try:
            return json.loads(self.read_bytes(uri))
        except json.JSONDecodeError as exc:
            raise StorageError(f"{uri} is not valid JSON: {exc}") from exc

    def exists(self, uri: str) -> bool:
        if is_s3(uri):
            loc = parse_s3(uri, need_key=True)
            store = self._store(uri)
            try:
                return store.object_exists(loc.bucket, loc.key)
            except Exception as exc:
                raise StorageError(f"cannot look up {uri}: {exc}") from exc
        return Path(uri).exists()

    def list_keys(self, prefix_uri: str, *, suffix: str = "") -> list[str]:
        """Every document under a prefix (recursively), as full URIs/paths, sorted."""
        if is_s3(prefix_uri):
            loc = parse_s3(prefix_uri)
            prefix = loc.key.rstrip("/") + "/" if loc.key else ""
            listed = self._store(prefix_uri).list_prefix(loc.bucket, prefix)
            return sorted(S3Location(loc.bucket, o.key).uri for o in listed if o.key.endswith(suffix))
        root = Path(prefix_uri)
        if not root.is_dir():
            return []
        return sorted(str(p) for p in root.rglob(f"*{suffix}") if p.is_file() and not p.name.startswith("."))

    # -- writing ------------------------------------------------------------------------------
    def write_bytes(self, uri: str, data: bytes, *, content_type: str = "application/octet-stream") -> str:
        """Store ``data`` at ``uri`` (local writes are atomic: temp file + rename). Returns ``uri``."""
        if is_s3(uri):
            loc = parse_s3(uri, need_key=True)
            store = self._store(uri)
            try:
                store.write_object(loc.bucket, loc.key, data, content_type=content_type)
            except Exception as exc:  # the store's refusal (no bucket, access denied) or a transient error
                raise StorageError(f"cannot write {uri}: {exc}") from exc
            return uri
        write_atomic(Path(uri), data)
        return uri

    def write_text(self, uri: str, text: str, *, content_type: str = "text/plain; charset=utf-8") -> str:
        return self.write_bytes(uri, text.encode("utf-8"), content_type=content_type)

    def write_json(self, uri: str, data: Any) -> str:
        text = data if isinstance(data, str) else json.dumps(data, indent=2, sort_keys=True, default=str)
        return self.write_text(uri, text, content_type="application/json")


def write_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a sibling temp file and a rename, so no reader sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # the folder itself may be what is missing
            tmp.unlink(missing_ok=True)
        raise StorageError(f"cannot write {path}: {exc}") from exc
    return path
