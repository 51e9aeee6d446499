"""Checkpoint I/O probe: torch.save then torch.load of a model-sized state dict on the target file system.

Why this and not only the storage probe: a checkpoint is hundreds of tensors pickled through Python,
so serialization and the file system's handling of one big streaming file both count. The save is
timed up to fsync (a checkpoint is not safe before that); before the load, the page cache is dropped
for the file so the load reads the file system, not memory.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from infra_probes.common import Outcome, extra_check, format_size, m
from infra_probes.environment import detect_environment, filesystem_of
from infra_probes.targets import resolve_target
from rlinf_bench.contracts import ProbeEnvironment, Target
from rlinf_bench.errors import ConfigError, ProbeError, ProbeUnavailableError

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
FREE_SPACE_MARGIN = 1.10
BRIEF_SAVE_S = 60.0
# OpenVLA-OFT: 7.5e9 parameters in bf16 is a 15 GB checkpoint; the default stays small for tests.
DEFAULT_PARAMS = 50_000_000


class CheckpointSettings(BaseModel):
    """State dict size and where it goes."""

    model_config = ConfigDict(extra="forbid")

    path: str
    params: int = Field(default=DEFAULT_PARAMS, gt=0)
    dtype: str = "bfloat16"
    tensor_params: int = Field(default=4096 * 4096, gt=0, description="Parameters per tensor (a 4096x4096 layer)")
    device: str = "cpu"
    instance_type: str | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--path", required=True, help="directory on the checkpoint file system, e.g. /fsx/ckpt")
    parser.add_argument(
        "--params", type=float, default=DEFAULT_PARAMS, help="parameters in the state dict (7.5e9 = OpenVLA-OFT)"
    )
    parser.add_argument("--dtype", default="bfloat16", choices=sorted(DTYPE_BYTES))
    parser.add_argument("--tensor-params", type=float, default=4096 * 4096, help="parameters per tensor")
    parser.add_argument("--device", default="cpu", help="where the tensors live before saving (cpu or cuda)")


def settings_from_args(args: argparse.Namespace) -> CheckpointSettings:
    return CheckpointSettings(
        path=args.path,
        params=int(args.params),
        dtype=args.dtype,
        tensor_params=int(args.tensor_params),
        device=args.device,
        instance_type=args.instance_type,
    )


def environment(settings: CheckpointSettings) -> ProbeEnvironment:
    return detect_environment(
        instance_type=settings.instance_type, fs_path=settings.path, with_gpu=settings.device != "cpu", with_torch=True
    )


def measure(settings: CheckpointSettings) -> Outcome:
    """Build the state dict, save it (to fsync), evict it from the page cache, load it; remove the file."""
    try:
        import torch
    except ImportError as exc:
        raise ProbeUnavailableError("checkpoint_io needs torch; install it in the probe image") from exc
    directory = Path(settings.path)
    nbytes = settings.params * DTYPE_BYTES[settings.dtype]
    _check_inputs(directory, nbytes)
    state = _state_dict(torch, settings)
    target_file = directory / f".rlinf-bench-ckpt-{uuid.uuid4().hex[:12]}.pt"
    try:
        t0 = time.perf_counter()
        with open(target_file, "wb") as fh:
            torch.save(state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        save_s = time.perf_counter() - t0
        file_bytes = target_file.stat().st_size
        del state
        cache_dropped = _drop_page_cache(target_file)
        t0 = time.perf_counter()
        loaded = torch.load(target_file, map_location="cpu", weights_only=True, mmap=False)
        load_s = time.perf_counter() - t0
        tensors = len(loaded)
        del loaded
    except OSError as exc:
        raise ProbeError(f"checkpoint I/O on {directory} failed: {exc}; check free space and permissions") from exc
    finally:
        target_file.unlink(missing_ok=True)
    values = {
        "save_s": m(save_s, "s"),
        "load_s": m(load_s, "s"),
        "save_gb_s": m(file_bytes / save_s / 1e9, "GB/s"),
        "load_gb_s": m(file_bytes / load_s / 1e9, "GB/s"),
        "size_gb": m(file_bytes / 1e9, "GB"),
    }
    default = Target(metric="save_s", op="<", value=BRIEF_SAVE_S, unit="s", source="brief: checkpoint save < 60 s")
    context: dict[str, Any] = {"instance_type": settings.instance_type}
    target = resolve_target("checkpoint_io", "save_s", default, **context)
    load_target = resolve_target("checkpoint_io", "load_s", None, **context)
    details: dict[str, Any] = {
        "tensors": tensors,
        "file_bytes": file_bytes,
        "page_cache_dropped_before_load": cache_dropped,
        "file_system": filesystem_of(directory),
        "checks": extra_check(values, load_target),
    }
    return Outcome(values=values, target=target, details=details)


def _check_inputs(directory: Path, nbytes: int) -> None:
    if not directory.exists():
        raise ProbeError(
            f"checkpoint path {directory} does not exist; mount the file system or pass an existing --path"
        )
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise ProbeError(f"checkpoint path {directory} is not a writable directory; pass a writable --path")
    free = filesystem_of(directory).get("free_bytes")
    needed = int(nbytes * FREE_SPACE_MARGIN)
    if free is not None and free < needed:
        raise ProbeError(
            f"checkpoint path {directory} has {format_size(free)} ({free} B) free, a {nbytes / 1e9:.2f} GB state dict "
            f"needs {needed} B; lower --params or free space (checked before writing)"
        )


def _state_dict(torch: Any, settings: CheckpointSettings) -> dict[str, Any]:
    """Tensors of random bits (incompressible), like trained weights; the last one takes the remainder."""
    dtype = getattr(torch, settings.dtype)
    try:
        device = torch.device(settings.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ProbeUnavailableError(f"--device {settings.device} asked for, but torch sees no CUDA device")
    except RuntimeError as exc:
        raise ConfigError(f"--device {settings.device!r} is not a torch device; use cpu or cuda[:N]") from exc
    # Random bits are generated on a GPU when one is there (seconds instead of minutes for 15 GB).
    gen_device = torch.device("cuda") if torch.cuda.is_available() else device
    gen = torch.Generator(device=gen_device).manual_seed(0)
    state: dict[str, Any] = {}
    left = settings.params
    index = 0
    while left > 0:
        n = min(settings.tensor_params, left)
        # Random int16 bit patterns viewed as bf16/fp16 are incompressible and cost no float math.
        raw = torch.randint(-(2**15), 2**15, (n,), dtype=torch.int16, generator=gen, device=gen_device)
        tensor = raw.view(dtype) if DTYPE_BYTES[settings.dtype] == 2 else raw.float()
        state[f"layers.{index}.weight"] = tensor.to(device)
        left -= n
        index += 1
    return state


def _drop_page_cache(path: Path) -> bool:
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
