"""Map the CUDA device of this process to the EGL device MuJoCo should render on.

On a GPU node EGL enumerates the GPUs in its own order, which in containers often differs from CUDA's
(and ``CUDA_VISIBLE_DEVICES`` renumbers CUDA devices but not EGL ones). Rendering on the wrong GPU
works, silently, but competes with another Job's policy. NVIDIA's EGL reports each device's CUDA
ordinal (``EGL_CUDA_DEVICE_NV``), which lets us find the right EGL index and export it as
``MUJOCO_EGL_DEVICE_ID``. On a CPU box (Mesa) there is nothing to map.

Only :mod:`ctypes` is used, so this runs before (and without) PyOpenGL or MuJoCo.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger(__name__)

EGL_CUDA_DEVICE_NV = 0x323A
_MAX_DEVICES = 32


def query_egl_cuda_ordinals() -> list[int | None] | None:
    """The CUDA ordinal of every EGL device, in EGL order (None for non-CUDA devices such as Mesa's).

    Returns None when libEGL or the device-query extension is unavailable.
    """
    name = ctypes.util.find_library("EGL") or "libEGL.so.1"
    try:
        egl = ctypes.CDLL(name)
    except OSError:
        return None
    get_proc = egl.eglGetProcAddress
    get_proc.restype = ctypes.c_void_p
    get_proc.argtypes = [ctypes.c_char_p]
    query_devices_ptr = get_proc(b"eglQueryDevicesEXT")
    query_attrib_ptr = get_proc(b"eglQueryDeviceAttribEXT")
    if not query_devices_ptr or not query_attrib_ptr:
        return None
    query_devices = ctypes.CFUNCTYPE(
        ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int)
    )(query_devices_ptr)
    query_attrib = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_ssize_t))(
        query_attrib_ptr
    )
    devices = (ctypes.c_void_p * _MAX_DEVICES)()
    count = ctypes.c_int(0)
    if not query_devices(_MAX_DEVICES, devices, ctypes.byref(count)):
        return None
    out: list[int | None] = []
    for i in range(count.value):
        value = ctypes.c_ssize_t(-1)
        ok = query_attrib(devices[i], EGL_CUDA_DEVICE_NV, ctypes.byref(value))
        out.append(int(value.value) if ok else None)
    return out


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
        return int(explicit) if explicit.isdigit() else None
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
