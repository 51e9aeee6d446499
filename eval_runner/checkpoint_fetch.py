"""Make a checkpoint available on local disk: check a local path, or download an S3 one.

The layout comes with the run: the intake found it from the checkpoint's files (``CheckpointRef.layout``),
and it is trusted here; what is checked again is what can have changed since, that the files a policy
loads are there. Only a checkpoint nobody has looked at yet (one given on the command line) has its layout
told from its files here, by the same rule (:func:`rlinf_bench.checkpoints.layouts.layout_of_names`).

From S3 only the files a policy loads are downloaded (:attr:`LayoutSpec.needed`: the weights and their
sibling config files), never the DCP/optimizer shards, which are several times larger and only needed to
resume training. Downloads go to ``<cache_dir>/<bucket>/<prefix>/`` and are reused when a complete copy with
the same sizes and ETags is already there, so three evaluation runs on one node download once.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.checkpoints.keys import split_uri
from rlinf_bench.checkpoints.layouts import (
    LAYOUTS,
    find_weights,
    layout_of_names,
    local_names,
    missing_weights,
    needed_names,
    weights_name,
)
from rlinf_bench.checkpoints.listing import CheckpointLister, StoredObject
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.document_store import is_s3
from rlinf_bench.errors import CheckpointError, ConfigError, StorageError
from rlinf_bench.ports import ObjectDownloader

log = logging.getLogger(__name__)

MANIFEST = ".rlinf-bench-download.json"


def materialize_checkpoint(
    uri: str,
    cache_dir: Path,
    *,
    layout: CheckpointLayout | None = None,
    objects: ObjectDownloader | None = None,
) -> Path:
    """Return a local checkpoint root for ``uri`` (a local path or ``s3://bucket/prefix``).

    ``layout`` is the one the intake found (None: told from the files here). Local paths are checked
    (exists, the layout's weights present). S3 checkpoints have the files a policy loads downloaded into
    ``cache_dir`` through ``objects`` (default: boto3's S3 with the default credentials, built on first use).
    Raises CheckpointError naming the path/URI and the fix.
    """
    if is_s3(uri):
        return _materialize_s3(uri, Path(cache_dir), layout, objects or S3Objects())
    path = Path(uri.removeprefix("file://")).expanduser()
    if not path.exists():
        raise CheckpointError(
            f"checkpoint {path} does not exist; pass the global_step_<N> directory of an RLinf run "
            "(…/checkpoints/global_step_<N>) or an s3://bucket/prefix URI"
        )
    if path.is_file():
        return path  # a weights file given directly; policies that accept one will read it
    if layout is None:
        find_weights(path)  # tells the layout from the files; raises CheckpointError when incomplete
    else:
        names = local_names(path)
        if weights_name(names, layout) is None:
            raise _with_layout_note(missing_weights(str(path), layout), layout, names)
    return path


def _with_layout_note(error: CheckpointError, layout: CheckpointLayout, names: list[str]) -> CheckpointError:
    """``error`` (no weights for ``layout``), noting when the files are another layout's than the request says."""
    found = layout_of_names(names)
    if found is not None and found is not layout:
        error.add_note(f"its files are those of layout {found.value}, not {layout.value} as its request says")
    return error


def _root_of(uri: str) -> tuple[str, str]:
    try:
        bucket, prefix = split_uri(uri)
    except ConfigError as exc:
        raise CheckpointError(f"{exc} (a checkpoint is s3://BUCKET/PREFIX/global_step_<N>)") from exc
    return bucket, prefix.strip("/")


def _listing(uri: str, objects: ObjectDownloader) -> list[StoredObject]:
    try:
        listed = CheckpointLister(objects).list(uri)
    except Exception as exc:  # a bucket that is not there, access denied, endpoint errors
        detail = str(exc) if isinstance(exc, StorageError) else f"{type(exc).__name__}: {exc}"
        raise CheckpointError(
            f"cannot list checkpoint {uri} ({detail}); check the bucket name and that this role may "
            "s3:ListBucket and s3:GetObject on it"
        ) from exc
    # FSx exports directories as zero-byte "dir/" keys; only files under actor/ make a checkpoint.
    files = [o for o in listed if o.relative.startswith("actor/") and not o.relative.endswith("/")]
    if not files:
        raise CheckpointError(
            f"checkpoint {uri} has no objects under actor/; check the URI (it must end at global_step_<N>) "
            "and that the export to S3 has finished"
        )
    return files


def _materialize_s3(uri: str, cache_dir: Path, layout: CheckpointLayout | None, objects: ObjectDownloader) -> Path:
    bucket, prefix = _root_of(uri)
    listing = _listing(uri, objects)
    names = [f.relative for f in listing]
    chosen = layout or layout_of_names(names)
    if chosen is None:
        raise CheckpointError(f"checkpoint {uri}: unrecognised RLinf layout (objects: {sorted(names)[:10]})")
    if weights_name(names, chosen) is None:
        error = CheckpointError(
            f"checkpoint {uri} ({chosen.value}) has no weights file yet (looked for "
            f"{', '.join(LAYOUTS[chosen].weights)}); the checkpoint is incomplete: wait for the export to finish "
            "or pick another global_step"
        )
        raise _with_layout_note(error, chosen, names)
    wanted = set(needed_names(names, chosen))
    local = cache_dir / bucket / prefix
    manifest = _read_manifest(local)
    fetched = 0
    for f in (f for f in listing if f.relative in wanted):
        target = local / f.relative
        if (
            manifest.get(f.relative) == {"size": f.size, "etag": f.etag}
            and target.is_file()
            and target.stat().st_size == f.size
        ):
            continue
        _download(objects, bucket, f"{prefix}/{f.relative}" if prefix else f.relative, f, target, uri)
        manifest[f.relative] = {"size": f.size, "etag": f.etag}
        _write_manifest(local, manifest)  # after each file, so an interrupted download resumes
        fetched += 1
    log.info("checkpoint %s: %d file(s) downloaded, %d reused from %s", uri, fetched, len(wanted) - fetched, local)
    return local


def _download(objects: ObjectDownloader, bucket: str, key: str, f: StoredObject, target: Path, uri: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.part")
    try:
        objects.download_object(bucket, key, tmp)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise CheckpointError(
            f"downloading s3://{bucket}/{key} of checkpoint {uri} failed ({exc}); retry or check permissions"
        ) from exc
    if tmp.stat().st_size != f.size:
        tmp.unlink()
        raise CheckpointError(
            f"s3://{bucket}/{key} changed while downloading (size differs); the checkpoint is still being written"
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
