"""Rendering: ``MUJOCO_GL``, EGL devices (CPU or GPU), the CUDA-to-EGL device mapping, one spawned frame."""

from __future__ import annotations

import ctypes.util
import os

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult, Target
from rlinf_doctor.egl_query import egl_devices

EGL_FIX = "export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl (headless EGL: Mesa on a CPU, the NVIDIA driver on a GPU node)"


def check_mujoco_gl(ctx: DoctorContext) -> CheckResult:
    """The backend MuJoCo will use; unset or a windowing backend without a display hangs or fails."""
    name = "rendering.mujoco_gl"
    gl = os.environ.get("MUJOCO_GL")
    platform = os.environ.get("PYOPENGL_PLATFORM")
    if not gl:
        measured = (
            "MUJOCO_GL is unset: MuJoCo then tries GLFW, which needs a display and hangs or fails in a headless "
            "Job (rlinf-bench evaluate sets egl itself; a bare LIBERO/robosuite import does not)"
        )
        if ctx.target is Target.LOCAL:
            return ctx.warn(name, measured, EGL_FIX)
        return ctx.problem(name, measured, EGL_FIX)
    if gl == "egl":
        if platform and platform != "egl":
            return ctx.problem(
                name,
                f"MUJOCO_GL=egl but PYOPENGL_PLATFORM={platform}: PyOpenGL and MuJoCo disagree on the platform",
                "export PYOPENGL_PLATFORM=egl",
            )
        return ctx.ok(name, f"MUJOCO_GL=egl, PYOPENGL_PLATFORM={platform or 'unset (the runner sets egl)'}")
    if gl in ("glx", "glfw"):
        display = os.environ.get("DISPLAY")
        if not display:
            return ctx.problem(
                name, f"MUJOCO_GL={gl} but DISPLAY is unset: there is no X display to render on", EGL_FIX
            )
        return ctx.warn(name, f"MUJOCO_GL={gl} on DISPLAY={display}: works only while that X server runs", EGL_FIX)
    if gl == "osmesa":
        if not ctypes.util.find_library("OSMesa"):
            return ctx.problem(
                name, "MUJOCO_GL=osmesa but libOSMesa is not installed", f"apt-get install libosmesa6, or {EGL_FIX}"
            )
        return ctx.warn(name, "MUJOCO_GL=osmesa: software rendering, several times slower than EGL", EGL_FIX)
    return ctx.problem(name, f"MUJOCO_GL={gl!r} is not a MuJoCo backend (egl, osmesa, glfw)", EGL_FIX)


def _uses_egl() -> bool:
    return os.environ.get("MUJOCO_GL", "egl") == "egl"


def check_egl(ctx: DoctorContext) -> list[CheckResult]:
    """EGL is loadable and has devices; on GPU nodes, CUDA device 0 has an EGL device to render on."""
    if not _uses_egl():
        reason = f"MUJOCO_GL={os.environ.get('MUJOCO_GL')}: EGL is not used"
        return [ctx.skip("rendering.egl", reason), ctx.skip("rendering.egl_cuda_map", reason)]
    found = egl_devices()
    if found is None:
        fix = "apt-get install libegl1 libegl-mesa0 (CPU) or use an image with the NVIDIA EGL library (GPU)"
        return [
            ctx.problem("rendering.egl", "libEGL cannot be loaded", fix),
            ctx.skip("rendering.egl_cuda_map", "no EGL"),
        ]
    lib, ordinals = found
    nvidia = [i for i, o in enumerate(ordinals) if o is not None]
    kinds = f"{len(nvidia)} NVIDIA, {len(ordinals) - len(nvidia)} other (Mesa/software)"
    egl = ctx.ok("rendering.egl", f"{lib}: {len(ordinals)} EGL device(s): {kinds}", cuda_ordinals=ordinals)
    if not ordinals:
        egl = ctx.warn(
            "rendering.egl",
            f"{lib} lists no EGL devices (no EGL_EXT_device_enumeration); MuJoCo falls back to the default display",
            "install Mesa's EGL (libegl-mesa0) on a CPU box or the NVIDIA EGL library on a GPU node",
        )
    return [egl, _cuda_map(ctx, ordinals)]


def _cuda_map(ctx: DoctorContext, ordinals: list[int | None]) -> CheckResult:
    name = "rendering.egl_cuda_map"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    explicit = os.environ.get("MUJOCO_EGL_DEVICE_ID")
    if explicit is not None and (not (explicit.isascii() and explicit.isdigit()) or int(explicit) >= len(ordinals)):
        return ctx.problem(
            name,
            f"MUJOCO_EGL_DEVICE_ID={explicit}, but there are {len(ordinals)} EGL device(s): MuJoCo refuses to render",
            "unset MUJOCO_EGL_DEVICE_ID (the runner maps the CUDA device to its EGL device)",
        )
    if all(o is None for o in ordinals):
        return ctx.skip(name, "no NVIDIA EGL device (CPU rendering through Mesa): nothing to map")
    # The policy runs on CUDA device 0 of the process (the first of CUDA_VISIBLE_DEVICES); the runner
    # (eval_runner/egl.py) renders on the EGL device reporting that ordinal, so check the same lookup.
    want = 0
    idx = next((i for i, o in enumerate(ordinals) if o == want), None)
    mapping = {i: o for i, o in enumerate(ordinals)}
    if idx is None:
        return ctx.problem(
            name,
            f"CUDA device {want} (CUDA_VISIBLE_DEVICES={visible or 'unset'}) has no EGL device; EGL->CUDA: {mapping}",
            "give the container the GPU's graphics capability (NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics)",
        )
    if explicit is not None and explicit != str(idx):
        return ctx.warn(
            name,
            f"MUJOCO_EGL_DEVICE_ID={explicit}, but CUDA device {want} is EGL device {idx}: rendering competes "
            "with another GPU's work",
            f"unset MUJOCO_EGL_DEVICE_ID (the runner maps it) or set it to {idx}",
        )
    return ctx.ok(name, f"CUDA device {want} renders on EGL device {idx}; EGL->CUDA: {mapping}")


def check_spawned_frame(ctx: DoctorContext) -> CheckResult:
    """One frame rendered by MuJoCo in a spawned worker, as the evaluation's workers do."""
    from rlinf_doctor.render_worker import SIZE, render_in_spawned_worker

    name = "rendering.spawned_frame"
    try:
        import mujoco  # noqa: F401 - only to know it is there; the worker imports it again
    except ImportError:
        return ctx.problem(name, "mujoco is not installed", "pip install -e '.[libero]' (or `make setup`)")
    # Rendered with the backend a run uses: the runner sets egl where MUJOCO_GL is unset.
    result = render_in_spawned_worker(ctx.render_timeout_s, {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl"})
    gl = os.environ.get("MUJOCO_GL") or "egl (the runner's default)"
    if "error" in result:
        fix = f"{EGL_FIX}; never create the renderer before forking workers (start them with spawn)"
        if "MUJOCO_EGL_DEVICE_ID" in result["error"]:
            fix = "unset MUJOCO_EGL_DEVICE_ID (the runner maps the CUDA device to its EGL device)"
        return ctx.problem(name, f"MUJOCO_GL={gl}: a spawned worker could not render: {result['error']}", fix, **result)
    if result["distinct_values"] < 2:
        return ctx.problem(
            name,
            f"the frame is blank (one value, mean {result['mean']}): the context renders nothing",
            EGL_FIX,
            **result,
        )
    renderer = f" on {result['gl_renderer']}" if result.get("gl_renderer") else ""
    return ctx.ok(
        name,
        f"MUJOCO_GL={gl}: {SIZE}x{SIZE} frame in a spawned worker{renderer}: render {result['render_s'] * 1000:.0f} ms, "
        f"worker total {result['total_s']:.1f} s",
        **result,
    )
