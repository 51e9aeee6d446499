"""Map the CUDA device of this process to the EGL device MuJoCo should render on.

On a GPU node EGL enumerates the GPUs in its own order, which in containers often differs from CUDA's
(and ``CUDA_VISIBLE_DEVICES`` renumbers CUDA devices but not EGL ones). Rendering on the wrong GPU
works, silently, but competes with another Job's policy. NVIDIA's EGL reports each device's CUDA
ordinal (``EGL_CUDA_DEVICE_NV``), which lets us find the right EGL index and export it as
``MUJOCO_EGL_DEVICE_ID``. On a CPU box (Mesa) there is nothing to map.

The query itself (ctypes only, before and without PyOpenGL or MuJoCo) is rlinf_doctor/egl_query.py, which the
doctor reads too.
"""

from __future__ import annotations

import logging
import os

from rlinf_doctor.egl_query import egl_devices

log = logging.getLogger(__name__)


def query_egl_cuda_ordinals() -> list[int | None] | None:
    """The CUDA ordinal of every EGL device, in EGL order (None for non-CUDA devices such as Mesa's).

    Returns None when libEGL cannot be loaded or lists no devices.
    """
    found = egl_devices()
    return found[1] or None if found is not None else None


def egl_index_for_cuda(cuda_ordinal: int, egl_cuda_ordinals: list[int | None]) -> int | None:
    """Index of the EGL device whose CUDA ordinal is ``cuda_ordinal`` (None when none matches)."""
    for idx, ordinal in enumerate(egl_cuda_ordinals):
        if ordinal == cuda_ordinal:
            return idx
    return None


def assign_egl_device() -> int | None:
    """Export ``MUJOCO_EGL_DEVICE_ID`` for this process's GPU and return it; None on CPU-only boxes.

    An explicit ``MUJOCO_EGL_DEVICE_ID`` is respected. Otherwise, when CUDA devices are visible, the
    first visible CUDA device (the one the policy uses) is looked up among the EGL devices.
    """
    explicit = os.environ.get("MUJOCO_EGL_DEVICE_ID")
    if explicit is not None:
        return int(explicit) if explicit.isascii() and explicit.isdigit() else None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not visible:
        return None
    ordinals = query_egl_cuda_ordinals()
    if not ordinals or all(o is None for o in ordinals):
        log.info("no NVIDIA EGL device found; rendering on the default EGL device")
        return None
    idx = egl_index_for_cuda(0, ordinals)
    if idx is None:
        log.warning(
            "CUDA device 0 (CUDA_VISIBLE_DEVICES=%s) has no EGL device %s; using EGL default", visible, ordinals
        )
        return None
    os.environ["MUJOCO_EGL_DEVICE_ID"] = str(idx)
    log.info("rendering on EGL device %d (CUDA device 0 of CUDA_VISIBLE_DEVICES=%s)", idx, visible)
    return idx
