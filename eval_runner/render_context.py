"""The offscreen render context of a LIBERO env: reused across hard resets, skipped where nobody reads the
images, and drawn without the mirror pass where only a video does (:class:`eval_runner.env.LiberoEnv`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = [
    "adopt_render_context",
    "drop_mirror_pass",
    "renders_skipped",
    "restore_renders",
    "same_render_assets",
    "skip_renders",
]


@contextlib.contextmanager
def renders_skipped(sim: Any) -> Iterator[None]:
    """Within the block, ``sim.render`` returns a blank image instead of rendering.

    robosuite's camera observables still "sample" on their usual sub-step, so their timers and flags
    move exactly as when rendering, and the next step outside the block renders on the same sub-step
    as it would have. Nothing in MuJoCo's state is written by rendering, so the physics is unchanged.
    """
    skip_renders(sim)
    try:
        yield
    finally:
        restore_renders(sim)


def same_render_assets(a: Any, b: Any) -> bool:
    """Whether two MuJoCo models upload the same things into a ``mujoco.MjrContext``: meshes, textures,
    height fields, skins and flexes, and the visual settings that size its buffers. Then one context
    renders either model exactly as a context built for it would."""

    def buffer_settings(model: Any) -> tuple[int, ...]:
        g, q = model.vis.global_, model.vis.quality
        return (g.offwidth, g.offheight, q.offsamples, q.shadowsize, q.numslices, q.numstacks, q.numquads)

    if buffer_settings(a) != buffer_settings(b):
        return False
    names = [n for n in dir(a) if n.startswith(("mesh_", "tex_", "hfield_", "skin_", "flex_"))]
    return all(_same_array(getattr(a, name), getattr(b, name)) for name in names)


def _same_array(x: np.ndarray, y: np.ndarray) -> bool:
    # NaN counts as equal to NaN: degenerate faces of LIBERO's meshes have NaN polygon normals
    return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))


def drop_mirror_pass(sim: Any) -> None:
    """Render without MuJoCo's planar reflections, which draw the whole scene again for each reflective
    plane or box (the stove's base in the LIBERO-Spatial and -Goal kitchens: 0.56-0.58 of the render's time
    without it, docs/performance.md). Only for images no policy reads: the reflecting faces' pixels change."""
    import mujoco

    context = sim._render_context_offscreen
    if context is not None:
        context.scn.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0


def adopt_render_context(context: Any, sim: Any) -> None:
    # What robosuite's MjRenderContext.__init__ does with a sim, minus building the GL context and uploading.
    context.gl_ctx.make_current()
    context.sim = sim
    context.model = sim.model
    context.data = sim.data
    sim.forward()
    sim.add_render_context(context)


def _blank_render(width: int | None = None, height: int | None = None, *, depth: bool = False, **_: Any) -> Any:
    image = np.zeros((height or 1, width or 1, 3), dtype=np.uint8)
    return (image, np.zeros((height or 1, width or 1), dtype=np.float32)) if depth else image


def skip_renders(sim: Any) -> None:
    sim.render = _blank_render  # an instance attribute shadows MjSim.render for this sim only


def restore_renders(sim: Any) -> None:
    sim.__dict__.pop("render", None)
