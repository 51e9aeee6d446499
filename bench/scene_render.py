"""One LIBERO scene frozen to files and rendered the way robosuite renders it, outside robosuite.

The render benches (``bench/render_contention.py``, ``bench/render_cost.py``) need many copies of one worker's
scene, in GL contexts and processes of their choosing, drawing exactly what ``MjSim.render`` draws. A scene is
built once through the evaluation's own environment and saved as a compiled MuJoCo model plus its state and
robosuite's render options; :class:`SceneRenderer` then draws it with MuJoCo's own calls, in robosuite's order.

MuJoCo draws the whole scene a second time, mirrored, for every reflective plane or box in it (its planar
reflections). :func:`mirror_geoms` finds those; a renderer built with ``draw_mirrors=False`` zeroes their
reflectance before drawing, which skips that pass and changes the pixels of the reflecting faces. It exists
to measure what the pass costs, never to render what a policy sees.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # importable as bench.scene_render when run as a file

from bench.eval_gpu_common import CAMERAS, SETTLE


def mirror_geoms(scene: Any) -> list[int]:
    """Indices into ``scene.geoms`` of the geoms MuJoCo draws the scene mirrored in: reflective planes and boxes.

    Empty when the scene's reflection flag is off. Other shapes with a reflectance (LIBERO's table legs,
    bowls) get no mirror pass from MuJoCo, so they cost nothing extra."""
    import mujoco

    if not scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION]:
        return []
    mirrors = (mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_BOX)
    return [i for i in range(scene.ngeom) if scene.geoms[i].reflectance > 0 and scene.geoms[i].type in mirrors]


def pixels_changed(image: np.ndarray, other: np.ndarray) -> int:
    """How many pixels of two same-size RGB images differ in any channel."""
    return int((image != other).any(axis=-1).sum())


@dataclass(frozen=True)
class SceneFiles:
    """One LIBERO scene frozen for rendering elsewhere: the compiled model, its state and robosuite's images."""

    model: str
    state: str
    reference: str
    resolution: int


def export_scene(suite: str, task: int, resolution: int, folder: Path) -> SceneFiles:
    """Build the task's scene as a worker does, start episode 0, and save what rendering it needs."""
    import mujoco

    from eval_runner.api import LiberoEnv, ObservationSpec, configure_libero
    from rlinf_bench.suites import get_suite

    configure_libero(None, needs_renderer=True)
    spec = ObservationSpec(cameras=CAMERAS, resolution=resolution, proprio=())
    env = LiberoEnv(get_suite(suite).task(task), spec, horizon=1000)
    env.start_episode(0, 0, SETTLE)
    model, data = env.sim.model._model, env.sim.data._data
    mujoco.mj_forward(model, data)  # the geoms' poses of this qpos: what a copy computes from the saved state
    files = SceneFiles(str(folder / "scene.mjb"), str(folder / "state.npz"), str(folder / "reference.npz"), resolution)
    mujoco.mj_saveModel(model, files.model, None)
    # robosuite hides collision meshes through its render context's options: copy those with the state
    render_context = env.sim._render_context_offscreen
    np.savez(
        files.state,
        qpos=data.qpos,
        qvel=data.qvel,
        mocap_pos=data.mocap_pos,
        mocap_quat=data.mocap_quat,
        geomgroup=render_context.vopt.geomgroup,
        sitegroup=render_context.vopt.sitegroup,
        option_flags=render_context.vopt.flags,
        scene_flags=render_context.scn.flags,
    )
    images = {cam: env.sim.render(width=resolution, height=resolution, camera_name=cam) for cam in CAMERAS}
    np.savez(files.reference, **images)
    env.close()
    return files


class SceneRenderer:
    """One copy of the scene rendered as robosuite's ``MjRenderContext`` renders it, in the current GL context."""

    def __init__(self, files: SceneFiles, context: Any, draw_mirrors: bool = True) -> None:
        import mujoco

        self.mujoco = mujoco
        self.context = context
        self.model = mujoco.MjModel.from_binary_path(files.model)
        self.data = mujoco.MjData(self.model)
        state = np.load(files.state)
        self.data.qpos[:], self.data.qvel[:] = state["qpos"], state["qvel"]
        self.data.mocap_pos[:], self.data.mocap_quat[:] = state["mocap_pos"], state["mocap_quat"]
        mujoco.mj_forward(self.model, self.data)
        context.make_current()
        self.con = mujoco.MjrContext(self.model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self.con)
        self.cons = [self.con]  # the pair modes add one per further camera
        self.scene = mujoco.MjvScene(self.model, maxgeom=1000)
        self.option, self.perturb, self.camera = mujoco.MjvOption(), mujoco.MjvPerturb(), mujoco.MjvCamera()
        self.option.geomgroup[:], self.option.sitegroup[:] = state["geomgroup"], state["sitegroup"]
        self.option.flags[:], self.scene.flags[:] = state["option_flags"], state["scene_flags"]
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self.camera_ids = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, name) for name in CAMERAS]
        self.side = files.resolution
        self.draw_mirrors = draw_mirrors

    def update_scene(self, camera_id: int) -> None:
        """The scene as ``camera_id`` sees it, its mirror passes dropped unless :attr:`draw_mirrors`."""
        mj = self.mujoco
        self.camera.fixedcamid = camera_id
        mj.mjv_updateScene(
            self.model, self.data, self.option, self.perturb, self.camera, mj.mjtCatBit.mjCAT_ALL, self.scene
        )
        if not self.draw_mirrors:
            for index in mirror_geoms(self.scene):
                self.scene.geoms[index].reflectance = 0.0

    def render(self, make_current: bool) -> list[np.ndarray]:
        """Both cameras, each rendered and read back before the next (robosuite's order)."""
        mj = self.mujoco
        if make_current:
            self.context.make_current()
        viewport = mj.MjrRect(0, 0, self.side, self.side)
        images = []
        for camera_id in self.camera_ids:
            self.update_scene(camera_id)
            mj.mjr_setBuffer(mj.mjtFramebuffer.mjFB_OFFSCREEN, self.con)
            mj.mjr_render(viewport, self.scene, self.con)
            image = np.empty((self.side, self.side, 3), dtype=np.uint8)
            mj.mjr_readPixels(image, None, viewport, self.con)
            images.append(image)
        return images

    def draw_pair(self, make_current: bool) -> None:
        """Both cameras drawn, each into its own offscreen buffer at the origin, nothing read back yet.

        Side by side in one buffer is not bit-identical (Mesa rounds the second viewport's pixels differently
        on ~0.3 % of them), so the second camera gets a second ``MjrContext`` of the same model."""
        mj = self.mujoco
        if make_current:
            self.context.make_current()
        if len(self.cons) < len(self.camera_ids):
            self.cons.append(mj.MjrContext(self.model, mj.mjtFontScale.mjFONTSCALE_150))
        viewport = mj.MjrRect(0, 0, self.side, self.side)
        for con, camera_id in zip(self.cons, self.camera_ids, strict=True):
            self.update_scene(camera_id)
            mj.mjr_setBuffer(mj.mjtFramebuffer.mjFB_OFFSCREEN, con)
            mj.mjr_render(viewport, self.scene, con)

    def read_pair(self) -> list[np.ndarray]:
        """What :meth:`draw_pair` drew: one image per camera."""
        mj = self.mujoco
        viewport = mj.MjrRect(0, 0, self.side, self.side)
        images = []
        for con in self.cons:
            image = np.empty((self.side, self.side, 3), dtype=np.uint8)
            mj.mjr_setBuffer(mj.mjtFramebuffer.mjFB_OFFSCREEN, con)
            mj.mjr_readPixels(image, None, viewport, con)
            images.append(image)
        return images


def build_renderers(files: SceneFiles, scenes: int, shared: bool, draw_mirrors: bool = True) -> list[SceneRenderer]:
    """``scenes`` copies, in one GL context (``shared``) or one each, with robosuite's context class."""
    from robosuite.utils.binding_utils import GLContext

    side = files.resolution
    one = GLContext(max_width=side, max_height=side, device_id=-1) if shared else None
    return [
        SceneRenderer(files, one or GLContext(max_width=side, max_height=side, device_id=-1), draw_mirrors)
        for _ in range(scenes)
    ]
