"""Renders one MuJoCo frame in a worker started with ``spawn``, the way evaluation workers start.

Workers that inherit an EGL context through ``fork`` fail with ``EGL_BAD_CONTEXT`` or hang; a spawned
worker that cannot render names the real problem (no EGL device, wrong ``MUJOCO_GL``). Kept free of
heavy imports at module level: the spawned child imports only this module and MuJoCo.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

SIZE = 64
_SCENE = """
<mujoco>
  <worldbody>
    <light pos="0 0 3"/>
    <geom type="plane" size="1 1 0.1" rgba="0.2 0.6 0.2 1"/>
    <body pos="0 0 0.2"><geom type="box" size="0.1 0.1 0.1" rgba="0.9 0.1 0.1 1"/></body>
    <camera name="front" pos="0 -1 0.6" xyaxes="1 0 0 0 0.5 1"/>
  </worldbody>
</mujoco>
"""


def render_one_frame(conn: Any, env_defaults: dict[str, str]) -> None:
    """Child entry point: send back timings and pixel statistics, or the error."""
    out: dict[str, Any]
    for key, value in env_defaults.items():
        os.environ.setdefault(key, value)
    try:
        t0 = time.perf_counter()
        import mujoco
        import numpy as np

        model = mujoco.MjModel.from_xml_string(_SCENE)
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        t1 = time.perf_counter()
        renderer = mujoco.Renderer(model, SIZE, SIZE)
        renderer.update_scene(data, camera="front")
        pixels = np.asarray(renderer.render())
        t2 = time.perf_counter()
        out = {
            "import_s": round(t1 - t0, 3),
            "render_s": round(t2 - t1, 3),
            "shape": list(pixels.shape),
            "mean": round(float(pixels.mean()), 2),
            "distinct_values": len(np.unique(pixels)),
            "gl_renderer": _gl_renderer(renderer),
            "mujoco_gl": os.environ.get("MUJOCO_GL", ""),
        }
        renderer.close()
    except BaseException as exc:  # everything goes back to the parent, named
        out = {"error": f"{type(exc).__name__}: {exc}"}
    conn.send(out)
    conn.close()


def _gl_renderer(renderer: Any) -> str:
    try:
        from OpenGL import GL

        renderer._gl_context.make_current()
        value = GL.glGetString(GL.GL_RENDERER)
        return value.decode() if isinstance(value, bytes) else str(value)
    except Exception:  # the GL string is a nicety; the frame is the test
        return ""


def render_in_spawned_worker(timeout_s: float, env_defaults: dict[str, str] | None = None) -> dict[str, Any]:
    """Start a spawned process, wait at most ``timeout_s`` for its frame; ``{"error": ...}`` on failure.

    ``env_defaults`` are set in the child where the environment does not set them (as the runner does).
    """
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=render_one_frame, args=(child, env_defaults or {}), name="rlinf-doctor-render", daemon=True
    )
    t0 = time.perf_counter()
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout_s):
            return {"error": f"the worker did not answer within {timeout_s:.0f} s (hung)", "hung": True}
        result: dict[str, Any] = parent.recv()
    except EOFError:
        proc.join(5)
        return {"error": f"the worker died (exit code {proc.exitcode}) before sending a frame"}
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()
    result["total_s"] = round(time.perf_counter() - t0, 3)
    return result
