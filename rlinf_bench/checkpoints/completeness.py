"""Is a checkpoint complete? List its root, check the layout's files, then wait for quiet.

FSx for Lustre exports objects in no promised order and ``torch.save`` is not atomic, so the arrival
of the layout's last file is necessary but not sufficient. A checkpoint counts as complete when
every required file is present and non-empty, the DCP shard ranks have no gaps, and nothing under
the root changed for ``quiet_period_s`` (REFERENCE.md section 3).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

from rlinf_bench.checkpoints.keys import is_temp_name, split_uri
from rlinf_bench.checkpoints.layouts import LAYOUTS, layout_of_names
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import CheckpointError, InvalidEventError

Clock = Callable[[], datetime]
_SHARD = re.compile(r"__(\d+)_0\.distcp")
#: S3 answers that no retry can change: the event named a bucket that is not there or cannot be one.
#: Throttling (SlowDown), timeouts and 5xx are left to propagate, so the message is retried.
PERMANENT_S3_ERRORS = frozenset({"NoSuchBucket", "InvalidBucketName"})


def s3_error_code(exc: BaseException) -> str:
    """The S3 error code of a botocore ClientError (read by duck typing: the core imports no botocore)."""
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    return str(error.get("Code", "")) if isinstance(error, dict) else ""


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class StoredObject:
    """One object under a checkpoint root."""

    relative: str  # path below the root, '/'-separated
    size: int
    last_modified: datetime


class ObjectLister(Protocol):
    """Lists every object below a checkpoint root (S3 prefix or local directory)."""

    def list(self, root_uri: str) -> list[StoredObject]: ...


class S3Lister:
    """Lists ``s3://bucket/prefix/`` with ListObjectsV2 (paginated) through an injected client."""

    def __init__(self, s3: Any) -> None:
        self._s3 = s3

    def list(self, root_uri: str) -> list[StoredObject]:
        bucket, prefix = split_uri(root_uri)
        if not bucket:
            raise CheckpointError(f"{root_uri!r} is not an s3:// URI; use LocalLister for local paths")
        start = prefix + "/"
        out: list[StoredObject] = []
        try:
            for page in self._s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=start):
                for obj in page.get("Contents", []):
                    out.append(StoredObject(obj["Key"][len(start) :], int(obj["Size"]), obj["LastModified"]))
        except Exception as exc:
            code = s3_error_code(exc)
            # botocore refuses some names itself, before any request (ParamValidationError).
            if code in PERMANENT_S3_ERRORS or type(exc).__name__ == "ParamValidationError":
                raise InvalidEventError(
                    f"cannot list {root_uri}: {code or type(exc).__name__} ({str(exc)[:300]}); "
                    "the event names a bucket this intake cannot read"
                ) from exc
            raise
        return out


class LocalLister:
    """Lists a local checkpoint directory (files only; directories are the local form of markers)."""

    def list(self, root_uri: str) -> list[StoredObject]:
        root = Path(root_uri)
        if not root.is_dir():
            return []
        out: list[StoredObject] = []
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                path = Path(dirpath) / name
                st = path.stat()
                rel = path.relative_to(root).as_posix()
                out.append(StoredObject(rel, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC)))
        return out


def lister_for(uri: str, s3_factory: Callable[[], Any]) -> ObjectLister:
    """An S3Lister for s3:// URIs (client built on demand), else a LocalLister."""
    return S3Lister(s3_factory()) if uri.startswith("s3://") else LocalLister()


@dataclass
class Completeness:
    """The verdict on one checkpoint, with what is missing so that a deferral or a DLQ reason says why."""

    root_uri: str
    layout: CheckpointLayout | None
    files: int
    total_bytes: int
    missing: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    shard_gaps: list[int] = field(default_factory=list)
    newest: datetime | None = None
    quiet_remaining_s: float = 0.0

    @property
    def files_ok(self) -> bool:
        return self.layout is not None and not (self.missing or self.empty or self.shard_gaps)

    @property
    def complete(self) -> bool:
        return self.files_ok and self.quiet_remaining_s <= 0

    @property
    def reason(self) -> str:
        """One line: why the checkpoint is (not) complete."""
        if self.layout is None:
            return f"no RLinf checkpoint files under {self.root_uri} ({self.files} objects)"
        parts = []
        if self.missing:
            parts.append("missing " + ", ".join(self.missing))
        if self.empty:
            parts.append("empty " + ", ".join(self.empty[:5]))
        if self.shard_gaps:
            parts.append("DCP shard ranks missing " + ", ".join(str(r) for r in self.shard_gaps[:10]))
        if not parts and self.quiet_remaining_s > 0:
            parts.append(f"last change {self._age_text()}; waiting {self.quiet_remaining_s:.0f}s more for quiet")
        if not parts:
            return f"complete ({self.layout.value}, {self.files} files, {self.total_bytes} bytes)"
        return f"{self.layout.value} checkpoint {self.root_uri} incomplete: " + "; ".join(parts)

    def _age_text(self) -> str:
        return self.newest.isoformat() if self.newest else "unknown"


def _matches(relative: str, pattern: str) -> bool:
    """Glob match segment by segment, so '*' never crosses a '/' (unlike fnmatch on the whole path)."""
    parts, pats = relative.split("/"), pattern.split("/")
    return len(parts) == len(pats) and all(fnmatchcase(p, q) for p, q in zip(parts, pats, strict=True))


def _shard_gaps(names: Iterable[str], shard_dir: str) -> list[int]:
    """Ranks missing between 0 and the highest rank seen: a shard FSx has not exported yet."""
    ranks = set()
    for name in names:
        head, _, base = name.rpartition("/")
        m = _SHARD.fullmatch(base)
        if head == shard_dir and m:
            ranks.add(int(m.group(1)))
    if not ranks:
        return []
    return sorted(set(range(max(ranks) + 1)) - ranks)


def check_completeness(
    root_uri: str,
    lister: ObjectLister,
    *,
    quiet_period_s: float,
    layout: CheckpointLayout | None = None,
    clock: Clock = utc_now,
) -> Completeness:
    """List ``root_uri`` and judge it against its layout (detected from the listing unless given)."""
    listed = lister.list(root_uri)
    # Directory markers and temp files are not part of the checkpoint, but a temp file still changing
    # means a writer is busy, so every object counts toward the quiet period.
    newest = max((o.last_modified for o in listed), default=None)
    real = [o for o in listed if not o.relative.endswith("/") and not is_temp_name(o.relative)]
    names = [o.relative for o in real]
    chosen = layout or layout_of_names(names)
    verdict = Completeness(
        root_uri=root_uri,
        layout=chosen,
        files=len(real),
        total_bytes=sum(o.size for o in real),
        newest=newest,
    )
    if chosen is None:
        return verdict
    spec = LAYOUTS[chosen]
    for pattern in spec.required:
        hits = [o for o in real if _matches(o.relative, pattern)]
        if not hits:
            verdict.missing.append(pattern)
        verdict.empty.extend(o.relative for o in hits if o.size == 0)
    if chosen is CheckpointLayout.FSDP_DCP:
        verdict.shard_gaps = _shard_gaps(names, "actor/dcp_checkpoint")
    elif chosen is CheckpointLayout.V01:
        verdict.shard_gaps = _shard_gaps(names, "actor")
    if newest is not None:
        age = (clock() - newest).total_seconds()
        verdict.quiet_remaining_s = max(0.0, quiet_period_s - age)
    return verdict
