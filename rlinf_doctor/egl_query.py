"""Which EGL devices this machine has, and the CUDA ordinal of each: the one ctypes query that both the
doctor's rendering check and the eval Job's EGL device mapping (eval_runner/egl.py) read.

Only :mod:`ctypes` is used, so this runs before (and without) PyOpenGL or MuJoCo.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["EGL_CUDA_DEVICE_NV", "egl_devices"]

EGL_CUDA_DEVICE_NV = 0x323A
_MAX_DEVICES = 32


def egl_devices() -> tuple[str, list[int | None]] | None:
    """The libEGL found and the CUDA ordinal of each EGL device (None: not an NVIDIA device, e.g. Mesa).

    None when libEGL cannot be loaded or lacks the device-enumeration extension.
    """
    lib = ctypes.util.find_library("EGL") or "libEGL.so.1"
    try:
        egl = ctypes.CDLL(lib)
    except OSError:
        return None
    get_proc = egl.eglGetProcAddress
    get_proc.restype = ctypes.c_void_p
    get_proc.argtypes = [ctypes.c_char_p]
    devices_ptr, attrib_ptr = get_proc(b"eglQueryDevicesEXT"), get_proc(b"eglQueryDeviceAttribEXT")
    if not devices_ptr:
        return lib, []
    query_devices = ctypes.CFUNCTYPE(
        ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int)
    )(devices_ptr)
    devices = (ctypes.c_void_p * _MAX_DEVICES)()
    count = ctypes.c_int(0)
    if not query_devices(_MAX_DEVICES, devices, ctypes.byref(count)):
        return lib, []
    ordinals: list[int | None] = []
    query_attrib = (
        ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_ssize_t))(attrib_ptr)
        if attrib_ptr
        else None
    )
    for i in range(count.value):
        value = ctypes.c_ssize_t(-1)
        ok = query_attrib is not None and query_attrib(devices[i], EGL_CUDA_DEVICE_NV, ctypes.byref(value))
        ordinals.append(int(value.value) if ok else None)
    return lib, ordinals
