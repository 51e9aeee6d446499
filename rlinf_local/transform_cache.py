"""samtranslator's output for template.yaml, kept in the cache folder under a digest of everything it reads.

Every local command that starts the stack expands template.yaml with samtranslator (a second Python, about
1.5 CPU-seconds on the 2-core dev box). The expansion depends only on the template, the state machine
definitions it inlines, the transform script, the samtranslator release and the region, so the result is kept
as ``<cache>/sam-transform/<digest>.json`` and reused while none of them changes. A file that cannot be read
back is made again, never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlinf_bench.cache import default_cache_dir
from rlinf_bench.document_store import write_atomic
from rlinf_bench.errors import StorageError

__all__ = ["cached_transform", "transform_digest"]

Transform = Callable[[], dict[str, Any]]


def transform_digest(template: Path, script: Path, python: Path, region: str) -> str:
    """A digest of what samtranslator's expansion of ``template`` reads: the template, its folder's state machine
    definitions, the transform ``script``, the samtranslator release installed beside ``python``, the region."""
    h = hashlib.sha256()
    definitions = template.parent / "statemachine"
    inputs = [template, script, *(sorted(definitions.rglob("*.json")) if definitions.is_dir() else [])]
    for path in inputs:
        h.update(str(path.relative_to(template.parent) if path.is_relative_to(template.parent) else path).encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    h.update(str(python).encode())
    h.update("\n".join(_translator_releases(python)).encode())
    h.update(region.encode())
    return h.hexdigest()[:32]


def _translator_releases(python: Path) -> list[str]:
    """The aws-sam-translator distributions of the venv ``python`` belongs to (their dist-info folder names), or
    the interpreter's modification time where it is not a venv's."""
    found = sorted(p.name for p in python.parent.parent.glob("lib/python*/site-packages/aws_sam_translator-*"))
    return found or [str(python.stat().st_mtime_ns)]


def cached_transform(digest: str, transform: Transform, cache_dir: Path | None = None) -> dict[str, Any]:
    """The expansion kept under ``digest``, else ``transform()``'s, kept for the next start."""
    path = (cache_dir or default_cache_dir()) / "sam-transform" / f"{digest}.json"
    try:
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and "Resources" in doc:
            return doc
    except (OSError, ValueError):
        pass  # none yet, or unreadable: made again below
    doc = transform()
    # whole or absent, so a start reading it meanwhile never sees half a file; a read-only cache costs the
    # next start the transform, nothing else
    with contextlib.suppress(StorageError):
        write_atomic(path, json.dumps(doc).encode())
    return doc
