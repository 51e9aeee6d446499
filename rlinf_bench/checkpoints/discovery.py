"""Find every checkpoint root under a run directory or bucket prefix (for backfills)."""

from __future__ import annotations

import logging

from rlinf_bench.checkpoints.keys import DEFAULT_ROOT_PATTERN, KeyMatch, parse_key, split_uri
from rlinf_bench.checkpoints.listing import CheckpointLister
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.errors import InvalidEventError
from rlinf_bench.ports import ObjectStore

log = logging.getLogger(__name__)


def discover_checkpoints(
    uri: str, *, objects: ObjectStore | None = None, patterns: tuple[str, ...] = (DEFAULT_ROOT_PATTERN,)
) -> list[CheckpointRef]:
    """Checkpoint roots under ``uri`` (s3://, listed through ``objects``, or a local folder), sorted by
    experiment then step."""
    bucket, prefix = split_uri(uri)
    absolute = not bucket and prefix.startswith("/")
    base = f"{prefix}/" if prefix and prefix != "/" else ""
    found: dict[str, CheckpointRef] = {}
    for stored in CheckpointLister(objects).list(uri):
        # The key rules are for object keys, so a local path is checked in its relative form.
        key = (base + stored.relative).lstrip("/")
        try:
            match = parse_key(key, bucket=bucket, patterns=patterns)
        except InvalidEventError as exc:
            log.warning("skipping %s: %s", key, exc)
            continue
        if isinstance(match, KeyMatch) and match.root_uri not in found:
            root = "/" + match.root_uri if absolute else match.root_uri
            found[match.root_uri] = CheckpointRef(uri=root, experiment=match.experiment, global_step=match.global_step)
    return sorted(found.values(), key=lambda r: (r.experiment, r.global_step, r.uri))
