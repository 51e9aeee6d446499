"""Find every checkpoint root under a run directory or bucket prefix (for backfills)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlinf_bench.checkpoints.keys import DEFAULT_ROOT_PATTERN, KeyMatch, parse_key, split_uri
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.errors import InvalidEventError

log = logging.getLogger(__name__)


def _keys(uri: str, s3_factory: Callable[[], Any]) -> tuple[str, list[str]]:
    bucket, prefix = split_uri(uri)
    if bucket:
        start = prefix + "/" if prefix else ""
        keys = [
            obj["Key"]
            for page in s3_factory().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=start)
            for obj in page.get("Contents", [])
        ]
        return bucket, keys
    root = Path(prefix)
    keys = [(Path(d) / f).as_posix().lstrip("/") for d, _, files in os.walk(root) for f in files]
    return "", keys


def discover_checkpoints(
    uri: str, *, s3_factory: Callable[[], Any], patterns: tuple[str, ...] = (DEFAULT_ROOT_PATTERN,)
) -> list[CheckpointRef]:
    """Checkpoint roots under ``uri`` (s3:// or local), sorted by experiment then step."""
    bucket, keys = _keys(uri, s3_factory)
    absolute = not bucket and split_uri(uri)[1].startswith("/")
    found: dict[str, CheckpointRef] = {}
    for key in keys:
        try:
            match = parse_key(key, bucket=bucket, patterns=patterns)
        except InvalidEventError as exc:
            log.warning("skipping %s: %s", key, exc)
            continue
        if isinstance(match, KeyMatch) and match.root_uri not in found:
            root = "/" + match.root_uri if absolute else match.root_uri
            found[match.root_uri] = CheckpointRef(uri=root, experiment=match.experiment, global_step=match.global_step)
    return sorted(found.values(), key=lambda r: (r.experiment, r.global_step, r.uri))
