"""Make a checkpoint available on local disk: validate a local path, or download an S3 one.

From S3 only the files a policy needs are downloaded (the weights and their sibling config files),
never the DCP/optimizer shards, which are several times larger and only needed to resume training.
Downloads go to ``<cache_dir>/<bucket>/<prefix>/`` and are reused when a complete copy with the same
sizes and ETags is already there, so three evaluation runs on one node download once.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from rlinf_bench.checkpoints.layouts import LAYOUTS, detect_layout, find_weights
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.document_store import is_s3, parse_s3
from rlinf_bench.errors import CheckpointError, ConfigError

log = logging.getLogger(__name__)

#: files to download per layout (relative to the checkpoint root); weights plus what loads them
DOWNLOAD_PATTERNS: dict[CheckpointLayout, tuple[str, ...]] = {
    CheckpointLayout.FSDP_DCP: ("actor/model_state_dict/*",),
    CheckpointLayout.V01: ("actor/model/*",),
    CheckpointLayout.LEGACY_PT: ("actor/model.pt",),
    CheckpointLayout.MEGATRON: ("actor/latest_checkpointed_iteration.txt", "actor/iter_*/mp_rank_*/model_optim_rng.pt"),
}
MANIFEST = ".rlinf-bench-download.json"


@dataclass(frozen=True)
class RemoteFile:
    key: str
    rel: str  # path relative to the checkpoint root, '/'-separated
    size: int
    etag: str


def materialize_checkpoint(uri: str, cache_dir: Path, *, s3_client: Any = None) -> Path:
    """Return a local checkpoint root for ``uri`` (a local path or ``s3://bucket/prefix``).

    Local paths are checked (exists, recognisable layout, weights present). S3 checkpoints have
    their weight files downloaded into ``cache_dir``; ``s3_client`` is a boto3 S3 client (created
    on first use when not given). Raises CheckpointError naming the path/URI and the fix.
    """
    if is_s3(uri):
        return _materialize_s3(uri, Path(cache_dir), s3_client)
    path = Path(uri.removeprefix("file://")).expanduser()
    if not path.exists():
        raise CheckpointError(
            f"checkpoint {path} does not exist; pass the global_step_<N> directory of an RLinf run "
            "(…/checkpoints/global_step_<N>) or an s3://bucket/prefix URI"
        )
    if path.is_file():
        return path  # a weights file given directly; policies that accept one will read it
    find_weights(path, detect_layout(path))  # raises CheckpointError when incomplete
    return path


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/a/b/`` -> ``("bucket", "a/b")``."""
    try:
        loc = parse_s3(uri, what="checkpoint URI")
    except ConfigError as exc:
        raise CheckpointError(f"{exc} (a checkpoint is s3://BUCKET/PREFIX/global_step_<N>)") from exc
    return loc.bucket, loc.key.strip("/")


def _match(rel: str, pattern: str) -> bool:
    # Part-wise glob so '*' never crosses a '/' (fnmatch alone would let actor/model/* match subfolders).
    parts, pats = PurePosixPath(rel).parts, PurePosixPath(pattern).parts
    return len(parts) == len(pats) and all(fnmatchcase(p, q) for p, q in zip(parts, pats, strict=True))


def remote_layout(rels: list[str], uri: str) -> CheckpointLayout:
    """The layout of a remote checkpoint from its object names (mirrors ``detect_layout``)."""
    if any(r.startswith(("actor/model_state_dict/", "actor/dcp_checkpoint/")) for r in rels):
        return CheckpointLayout.FSDP_DCP
    if "actor/latest_checkpointed_iteration.txt" in rels:
        return CheckpointLayout.MEGATRON
    if any(r.startswith("actor/model/") for r in rels):
        return CheckpointLayout.V01
    if "actor/model.pt" in rels:
        return CheckpointLayout.LEGACY_PT
    if not rels:
        raise CheckpointError(
            f"checkpoint {uri} has no objects under actor/; check the URI (it must end at global_step_<N>) "
            "and that the export to S3 has finished"
        )
    raise CheckpointError(f"checkpoint {uri}: unrecognised RLinf layout (objects: {sorted(rels)[:10]})")


def _list(client: Any, bucket: str, prefix: str) -> list[RemoteFile]:
    base = f"{prefix}/" if prefix else ""
    files: list[RemoteFile] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{base}actor/"):
        for obj in page.get("Contents", []):
            key = obj["Key"]
            if key.endswith("/"):
                continue  # FSx exports directories as zero-byte "dir/" keys
            files.append(RemoteFile(key, key[len(base) :], int(obj["Size"]), str(obj.get("ETag", "")).strip('"')))
    return files


def _materialize_s3(uri: str, cache_dir: Path, client: Any) -> Path:
    bucket, prefix = parse_s3_uri(uri)
    if client is None:
        import boto3

        client = boto3.client("s3")
    try:
        listing = _list(client, bucket, prefix)
    except CheckpointError:
        raise
    except Exception as exc:  # botocore ClientError (NoSuchBucket, AccessDenied), endpoint errors
        raise CheckpointError(
            f"cannot list checkpoint {uri} ({type(exc).__name__}: {exc}); check the bucket name and that this "
            "role may s3:ListBucket and s3:GetObject on it"
        ) from exc
    layout = remote_layout([f.rel for f in listing], uri)
    spec = LAYOUTS[layout]
    wanted = [f for f in listing if any(_match(f.rel, p) for p in DOWNLOAD_PATTERNS[layout])]
    if not any(_match(f.rel, w) for f in wanted for w in spec.weights):
        raise CheckpointError(
            f"checkpoint {uri} ({layout.value}) has no weights file yet (looked for {', '.join(spec.weights)}); "
            "the checkpoint is incomplete: wait for the export to finish or pick another global_step"
        )
    local = cache_dir / bucket / prefix
    manifest = _read_manifest(local)
    fetched = 0
    for f in wanted:
        target = local / f.rel
        if (
            manifest.get(f.rel) == {"size": f.size, "etag": f.etag}
            and target.is_file()
            and target.stat().st_size == f.size
        ):
            continue
        _download(client, bucket, f, target, uri)
        manifest[f.rel] = {"size": f.size, "etag": f.etag}
        _write_manifest(local, manifest)  # after each file, so an interrupted download resumes
        fetched += 1
    log.info("checkpoint %s: %d file(s) downloaded, %d reused from %s", uri, fetched, len(wanted) - fetched, local)
    return local


def _download(client: Any, bucket: str, f: RemoteFile, target: Path, uri: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.part")
    try:
        client.download_file(bucket, f.key, str(tmp))
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise CheckpointError(
            f"downloading s3://{bucket}/{f.key} of checkpoint {uri} failed ({exc}); retry or check permissions"
        ) from exc
    if tmp.stat().st_size != f.size:
        tmp.unlink()
        raise CheckpointError(
            f"s3://{bucket}/{f.key} changed while downloading (size differs); the checkpoint is still being written"
        )
    os.replace(tmp, target)


def _read_manifest(local: Path) -> dict[str, Any]:
    path = local / MANIFEST
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {}  # no or damaged manifest: everything is downloaded again, which is always safe
    return data if isinstance(data, dict) else {}


def _write_manifest(local: Path, manifest: dict[str, Any]) -> None:
    local.mkdir(parents=True, exist_ok=True)
    tmp = local / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.replace(tmp, local / MANIFEST)
