"""Describe where a probe ran: instance type, GPUs, driver, CUDA/NCCL/torch versions, file system.

Every lookup is best effort and cheap: a field that cannot be read stays ``None`` rather than
failing the probe, because a measurement without one label is still worth reporting.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import urllib.request
from pathlib import Path
from typing import Any

from rlinf_bench.contracts import ProbeEnvironment

log = logging.getLogger("infra_probes")

INSTANCE_TYPE_ENV = "RLINF_BENCH_INSTANCE_TYPE"
_IMDS = "http://169.254.169.254/latest"


def detect_environment(
    *,
    instance_type: str | None = None,
    fs_path: str | os.PathLike[str] | None = None,
    with_gpu: bool = True,
    with_torch: bool = False,
) -> ProbeEnvironment:
    """Collect what is known about this machine; ``with_torch`` adds torch/CUDA/NCCL versions (imports torch)."""
    env = ProbeEnvironment(instance_type=resolve_instance_type(instance_type), host=socket.gethostname())
    if with_gpu:
        _fill_gpu(env)
    if with_torch:
        _fill_torch(env)
    if fs_path is not None:
        fs = filesystem_of(Path(fs_path))
        env.fs_path = str(fs_path)
        env.fs_type = fs.get("fs_type")
        env.fs_capacity_bytes = fs.get("capacity_bytes")
    return env


def resolve_instance_type(explicit: str | None = None) -> str | None:
    """``--instance-type``, else $RLINF_BENCH_INSTANCE_TYPE, else EC2 instance metadata (0.5 s budget)."""
    if explicit:
        return explicit
    if os.environ.get(INSTANCE_TYPE_ENV):
        return os.environ[INSTANCE_TYPE_ENV]
    return _imds_instance_type()


@functools.lru_cache(maxsize=1)
def _imds_instance_type() -> str | None:
    # IMDSv2 first (token), which is what EKS nodes enforce; off EC2 this fails fast or times out at 0.25 s.
    if os.environ.get("RLINF_BENCH_NO_IMDS"):
        return None
    try:
        req = urllib.request.Request(
            f"{_IMDS}/api/token", method="PUT", headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"}
        )
        with urllib.request.urlopen(req, timeout=0.25) as resp:
            token = resp.read().decode()
        req = urllib.request.Request(f"{_IMDS}/meta-data/instance-type", headers={"X-aws-ec2-metadata-token": token})
        with urllib.request.urlopen(req, timeout=0.25) as resp:
            return str(resp.read().decode().strip()) or None
    except OSError:
        return None


def _fill_gpu(env: ProbeEnvironment) -> None:
    try:
        import pynvml
    except ImportError:
        return
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return
    try:
        count = pynvml.nvmlDeviceGetCount()
        env.gpu_count = count
        env.driver = _text(pynvml.nvmlSystemGetDriverVersion())
        if count:
            env.gpu_model = _text(pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0)))
        cuda = pynvml.nvmlSystemGetCudaDriverVersion()
        env.cuda = env.cuda or f"{cuda // 1000}.{(cuda % 1000) // 10}"
    except pynvml.NVMLError as exc:
        log.debug("NVML query failed: %s", exc)
    finally:
        pynvml.nvmlShutdown()


def _fill_torch(env: ProbeEnvironment) -> None:
    try:
        import torch
    except ImportError:
        return
    env.torch = torch.__version__
    if torch.version.cuda:
        env.cuda = torch.version.cuda
    if torch.cuda.is_available():
        with contextlib.suppress(RuntimeError, AttributeError):
            env.nccl_version = ".".join(str(p) for p in torch.cuda.nccl.version())
        env.gpu_count = env.gpu_count or torch.cuda.device_count()
        env.gpu_model = env.gpu_model or torch.cuda.get_device_name(0)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def filesystem_of(path: Path) -> dict[str, Any]:
    """File system type (from /proc/mounts, longest mount prefix) and capacity/free bytes of ``path``."""
    out: dict[str, Any] = {}
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    resolved = probe.resolve()
    try:
        st = os.statvfs(resolved)
        out["capacity_bytes"] = st.f_blocks * st.f_frsize
        out["free_bytes"] = st.f_bavail * st.f_frsize
    except OSError:
        pass
    best = ""
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) < 3:
                continue
            mount = parts[1].replace("\\040", " ")
            inside = str(resolved) == mount or str(resolved).startswith(mount.rstrip("/") + "/")
            if inside and len(mount) >= len(best):
                best, out["fs_type"], out["mount"], out["device"] = mount, parts[2], mount, parts[0]
    except OSError:
        pass
    return out
