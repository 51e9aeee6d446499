"""Storage probe: sequential write then read with O_DIRECT, the way dd oflag=direct measures.

Why O_DIRECT plus fsync: without them the page cache absorbs the write and the figure is memory
bandwidth. Why random data, unique per 4 KiB page: FSx for Lustre may compress (LZ4) and some file
systems deduplicate, so zeros (dd's /dev/zero) can overstate throughput by orders of magnitude.
"""

from __future__ import annotations

import argparse
import errno
import mmap
import os
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from infra_probes.common import Outcome, extra_check, format_size, m, parse_size
from infra_probes.environment import detect_environment, filesystem_of
from infra_probes.targets import fsx_expectation_mb_s, resolve_target
from rlinf_bench.contracts import ProbeEnvironment, Target
from rlinf_bench.errors import ProbeError

PAGE = mmap.PAGESIZE
MEMORY_FS = {"tmpfs", "ramfs", "devtmpfs"}
FREE_SPACE_MARGIN = 1.05
BRIEF_MB_S = 500.0


class StorageSettings(BaseModel):
    """What the storage probe writes and how."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Directory on the file system to measure (e.g. /fsx)")
    size_bytes: int = Field(default=1 << 30, gt=0)
    block_bytes: int = Field(default=16 << 20, gt=0)
    fsx_capacity_tib: float | None = None
    fsx_tier_mb_s_per_tib: float | None = None
    hugepages: bool = Field(default=False, description="Back the I/O buffer with transparent huge pages")
    instance_type: str | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--path", required=True, help="directory on the file system to measure, e.g. /fsx")
    parser.add_argument("--size", default="1G", help="bytes to write then read (default 1G; use >= 4G on FSx)")
    parser.add_argument("--block-size", default="16M", help="bytes per write/read call (multiple of 4 KiB)")
    parser.add_argument("--fsx-capacity-tib", type=float, help="FSx capacity in TiB: sets the expectation")
    parser.add_argument("--fsx-tier", type=float, help="FSx throughput tier in MB/s per TiB (125/250/500/1000)")
    parser.add_argument(
        "--hugepages",
        action="store_true",
        help="back the I/O buffer with transparent huge pages (fewer pages to pin per O_DIRECT call)",
    )


def settings_from_args(args: argparse.Namespace) -> StorageSettings:
    return StorageSettings(
        path=args.path,
        size_bytes=parse_size(args.size, name="--size"),
        block_bytes=parse_size(args.block_size, name="--block-size"),
        fsx_capacity_tib=args.fsx_capacity_tib,
        fsx_tier_mb_s_per_tib=args.fsx_tier,
        hugepages=args.hugepages,
        instance_type=args.instance_type,
    )


def environment(settings: StorageSettings) -> ProbeEnvironment:
    return detect_environment(instance_type=settings.instance_type, fs_path=settings.path, with_gpu=False)


def measure(settings: StorageSettings) -> Outcome:
    """Check the inputs, write then read ``size_bytes`` with O_DIRECT, and remove the file whatever happens."""
    directory = Path(settings.path)
    _check_inputs(directory, settings)
    fs = filesystem_of(directory)
    target_file = directory / f".rlinf-bench-storage-{uuid.uuid4().hex[:12]}.bin"
    try:
        write = write_timed(target_file, settings.size_bytes, settings.block_bytes, hugepages=settings.hugepages)
        read = read_timed(target_file, settings.size_bytes, settings.block_bytes, hugepages=settings.hugepages)
    finally:
        target_file.unlink(missing_ok=True)
    values = {
        "write_mb_s": m(settings.size_bytes / write["seconds"] / 1e6, "MB/s"),
        "read_mb_s": m(settings.size_bytes / read["seconds"] / 1e6, "MB/s"),
        "write_s": m(write["seconds"], "s"),
        "read_s": m(read["seconds"], "s"),
        "size_mb": m(settings.size_bytes / 1e6, "MB"),
    }
    expectation = fsx_expectation_mb_s(settings.fsx_capacity_tib, settings.fsx_tier_mb_s_per_tib)
    target, read_target = _targets(settings, expectation)
    details: dict[str, Any] = {
        "o_direct": write["o_direct"] and read["o_direct"],
        "fsync": True,
        "data": "random bytes, unique per 4 KiB page (incompressible, not deduplicable)",
        "file_system": fs,
        "checks": extra_check(values, read_target),
        "fsx_expectation_mb_s": expectation,
    }
    outcome = Outcome(values=values, target=target, details=details)
    if fs.get("fs_type") in MEMORY_FS:
        details["memory_backed"] = True
        outcome.unavailable = (
            f"{directory} is on {fs['fs_type']}: memory-backed, O_DIRECT is accepted and ignored, so these figures"
            " are memory bandwidth, not storage throughput; point --path at the real file system"
        )
    elif not details["o_direct"]:
        outcome.note = "the file system refused O_DIRECT: measured buffered I/O with fsync and page-cache eviction"
    return outcome


def _targets(settings: StorageSettings, expectation: float | None) -> tuple[Target | None, Target | None]:
    """Write target (the verdict) and read target (an extra check): registry first, then FSx or the brief."""
    context: dict[str, Any] = {
        "instance_type": settings.instance_type,
        "fs_capacity_tib": settings.fsx_capacity_tib,
        "fs_tier_mb_s_per_tib": settings.fsx_tier_mb_s_per_tib,
    }
    source = (
        f"FSx for Lustre: {settings.fsx_capacity_tib:g} TiB x {settings.fsx_tier_mb_s_per_tib:g} MB/s/TiB"
        if expectation
        else "brief: >500 MB/s sequential write on FSx"
    )
    default = Target(
        metric="write_mb_s",
        op=">=" if expectation else ">",
        value=expectation or BRIEF_MB_S,
        unit="MB/s",
        source=source,
    )
    read_default = default.model_copy(update={"metric": "read_mb_s"})
    return (
        resolve_target("storage", "write_mb_s", default, **context),
        resolve_target("storage", "read_mb_s", read_default, **context),
    )


def _check_inputs(directory: Path, settings: StorageSettings) -> None:
    if settings.block_bytes % PAGE or settings.size_bytes % settings.block_bytes:
        raise ProbeError(
            f"--block-size {settings.block_bytes} must be a multiple of {PAGE} (O_DIRECT alignment) and --size "
            f"{settings.size_bytes} a multiple of the block size; use e.g. --size 4G --block-size 16M"
        )
    if not directory.exists():
        raise ProbeError(f"storage path {directory} does not exist; mount the file system or pass an existing --path")
    if not directory.is_dir():
        raise ProbeError(f"storage path {directory} is not a directory; pass the directory to measure in")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ProbeError(f"storage path {directory} is not writable by uid {os.getuid()}; pass a writable --path")
    free = filesystem_of(directory).get("free_bytes")
    needed = int(settings.size_bytes * FREE_SPACE_MARGIN)
    if free is not None and free < needed:
        raise ProbeError(
            f"storage path {directory} has {format_size(free)} ({free} B) free, the probe needs {needed} B "
            f"({format_size(settings.size_bytes)} + 5 %); lower --size or free space (checked before writing)"
        )


def _open(path: Path, flags: int) -> tuple[int, bool]:
    """Open with O_DIRECT when the file system allows it (some FUSE mounts refuse with EINVAL)."""
    direct = getattr(os, "O_DIRECT", 0)
    try:
        return os.open(path, flags | direct, 0o600), bool(direct)
    except OSError as exc:
        if exc.errno != errno.EINVAL or not direct:
            raise ProbeError(f"cannot open {path}: {exc.strerror}; check the path and permissions") from exc
    return os.open(path, flags, 0o600), False


def _fill(buf: mmap.mmap, block_index: int) -> None:
    # Stamp a running counter at the start of every page so no two pages of the file are identical.
    words = np.frombuffer(buf, dtype=np.uint64).reshape(-1, PAGE // 8)
    pages = words.shape[0]
    words[:, 0] = np.arange(block_index * pages, (block_index + 1) * pages, dtype=np.uint64)


def _buffer(block: int, hugepages: bool) -> mmap.mmap:
    """Anonymous mmap: page-aligned, as O_DIRECT requires; optionally advised to use huge pages."""
    buf = mmap.mmap(-1, block)
    if hugepages and hasattr(mmap, "MADV_HUGEPAGE"):
        buf.madvise(mmap.MADV_HUGEPAGE)
    return buf


def write_timed(path: Path, size: int, block: int, *, hugepages: bool = False) -> dict[str, Any]:
    """Write ``size`` bytes to ``path`` in ``block``-byte O_DIRECT writes (when the file system allows it), then
    fsync: ``{"seconds": ..., "o_direct": ...}``, the time from the first write to the end of the fsync."""
    buf = _buffer(block, hugepages)
    try:
        buf.write(os.urandom(block))
        fd, direct = _open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            t0 = time.perf_counter()
            for i in range(size // block):
                _fill(buf, i)
                written = os.write(fd, buf)
                if written != block:
                    raise ProbeError(f"short write to {path}: {written} of {block} bytes; is the file system full?")
            os.fsync(fd)
            seconds = time.perf_counter() - t0
        except OSError as exc:
            raise ProbeError(f"writing {path} failed: {exc.strerror}; check free space and quotas") from exc
        finally:
            os.close(fd)
    finally:
        buf.close()
    return {"seconds": seconds, "o_direct": direct}


def read_timed(path: Path, size: int, block: int, *, hugepages: bool = False) -> dict[str, Any]:
    """Read ``size`` bytes of ``path`` back in ``block``-byte reads, from storage rather than the page cache:
    ``{"seconds": ..., "o_direct": ...}``."""
    buf = _buffer(block, hugepages)
    try:
        fd, direct = _open(path, os.O_RDONLY)
        try:
            if not direct and hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # read from storage, not the page cache
            t0 = time.perf_counter()
            total = 0
            while total < size:
                got = os.readv(fd, [buf])
                if got <= 0:
                    raise ProbeError(f"{path} ended after {total} of {size} bytes while reading back")
                total += got
            seconds = time.perf_counter() - t0
        except OSError as exc:
            raise ProbeError(f"reading {path} failed: {exc.strerror}") from exc
        finally:
            os.close(fd)
    finally:
        buf.close()
    return {"seconds": seconds, "o_direct": direct}
