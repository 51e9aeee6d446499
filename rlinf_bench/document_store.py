"""One way to address stored documents: a local path or an ``s3://bucket/key`` URI.

Results, reports and configs move between a laptop, an eval Job and a Lambda; each of them names a
document by a string. This module is the only place that tells a local path from an S3 URI, so the
rules (what a valid URI is, atomic local writes, what a missing object looks like) are the same
everywhere. The S3 client is passed in, or built on first use by the factory that an installed adapter
declares in the ``rlinf_bench.s3_client`` entry-point group (``rlinf_aws``: boto3's default credentials
chain). The core never imports an AWS library itself, and holds no client globally.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from rlinf_bench.errors import ConfigError, StorageError

__all__ = [
    "S3Location",
    "Storage",
    "StoredObjectMissingError",
    "exists",
    "is_s3",
    "join",
    "list_keys",
    "parse_s3",
    "read_bytes",
    "read_json",
    "read_text",
    "write_atomic",
    "write_bytes",
    "write_json",
    "write_text",
]

S3_SCHEME = "s3://"


class StoredObjectMissingError(StorageError):
    """The path or object does not exist."""


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


def _error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


_MISSING_CODES = {"NoSuchKey", "404", "NotFound", "NoSuchBucket"}


#: Entry-point group of the factory that builds an S3 client when none is passed in (pyproject.toml).
S3_CLIENT_GROUP = "rlinf_bench.s3_client"


def default_s3_client() -> Any:
    """An S3 client from the installed adapter's factory; a clear error when no adapter is installed."""
    found = sorted(entry_points(group=S3_CLIENT_GROUP), key=lambda ep: ep.name)
    if not found:
        raise ConfigError(
            f"an s3:// URI needs an S3 client, and no package declares one in the {S3_CLIENT_GROUP!r} "
            "entry points: install rlinf-bench with its aws extra (pip install 'rlinf-bench[aws]'), or pass "
            "Storage(s3=<boto3 S3 client>)"
        )
    return found[0].load()()


class Storage:
    """Reads and writes documents by URI. ``s3`` is an S3 client (boto3's interface), or a factory called
    on first use; with neither, :func:`default_s3_client` builds one when an S3 URI is first touched."""

    def __init__(self, s3: Any = None, *, s3_factory: Callable[[], Any] | None = None) -> None:
        self._s3 = s3
        self._s3_factory = s3_factory

    @property
    def s3(self) -> Any:
        if self._s3 is None:
            self._s3 = (self._s3_factory or default_s3_client)()
        return self._s3

    # -- reading ------------------------------------------------------------------------------
    def read_bytes(self, uri: str) -> bytes:
        """The stored bytes; :class:`StoredObjectMissingError` names ``uri`` when it is absent."""
        if is_s3(uri):
            loc = parse_s3(uri, need_key=True)
            try:
                body = self.s3.get_object(Bucket=loc.bucket, Key=loc.key)["Body"]
                return bytes(body.read())
            except Exception as exc:
                if _error_code(exc) in _MISSING_CODES:
                    raise StoredObjectMissingError(f"{uri} does not exist") from exc
                raise StorageError(f"cannot read {uri}: {exc}") from exc
        try:
            return Path(uri).read_bytes()
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
            try:
                self.s3.head_object(Bucket=loc.bucket, Key=loc.key)
            except Exception as exc:
                if _error_code(exc) in _MISSING_CODES:
                    return False
                raise StorageError(f"cannot look up {uri}: {exc}") from exc
            return True
        return Path(uri).exists()

    def list_keys(self, prefix_uri: str, *, suffix: str = "") -> list[str]:
        """Every document under a prefix (recursively), as full URIs/paths, sorted."""
        if is_s3(prefix_uri):
            loc = parse_s3(prefix_uri)
            prefix = loc.key.rstrip("/") + "/" if loc.key else ""
            out: list[str] = []
            paginator = self.s3.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=loc.bucket, Prefix=prefix):
                for item in page.get("Contents", []):
                    if item["Key"].endswith(suffix):
                        out.append(f"{S3_SCHEME}{loc.bucket}/{item['Key']}")
            return sorted(out)
        root = Path(prefix_uri)
        if not root.is_dir():
            return []
        return sorted(str(p) for p in root.rglob(f"*{suffix}") if p.is_file() and not p.name.startswith("."))

    # -- writing ------------------------------------------------------------------------------
    def write_bytes(self, uri: str, data: bytes, *, content_type: str = "application/octet-stream") -> str:
        """Store ``data`` at ``uri`` (local writes are atomic: temp file + rename). Returns ``uri``."""
        if is_s3(uri):
            loc = parse_s3(uri, need_key=True)
            try:
                self.s3.put_object(Bucket=loc.bucket, Key=loc.key, Body=data, ContentType=content_type)
            except Exception as exc:
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


# Module-level conveniences for callers that use the default credentials chain.
_default = Storage()


def read_bytes(uri: str) -> bytes:
    return _default.read_bytes(uri)


def read_text(uri: str) -> str:
    return _default.read_text(uri)


def read_json(uri: str) -> Any:
    return _default.read_json(uri)


def exists(uri: str) -> bool:
    return _default.exists(uri)


def list_keys(prefix_uri: str, *, suffix: str = "") -> list[str]:
    return _default.list_keys(prefix_uri, suffix=suffix)


def write_bytes(uri: str, data: bytes) -> str:
    return _default.write_bytes(uri, data)


def write_text(uri: str, text: str) -> str:
    return _default.write_text(uri, text)


def write_json(uri: str, data: Any) -> str:
    return _default.write_json(uri, data)
