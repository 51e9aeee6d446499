"""A LIBERO scene's perturbed episodes: each axis applied at its point of the episode's start, in the worker.

:class:`ScenePerturbations` is what :class:`eval_runner.envs.libero_scene.LiberoScene` calls for an episode
with a perturbation. The start is the control twin's (the same reset from the same RNG state, the same
initial state, the same settle steps), with one axis applied:

- camera, light, texture: after the reset, before the initial state is loaded (model edits, :mod:`.visual`);
- robot_init, layout: after the initial state is loaded, before the settle steps (:mod:`.physical`); a layout
  plays on the task's scene with its level's distractors (:mod:`.distractors`), started from the control
  twin's state, and one that is not physically valid is redrawn, at most :data:`MAX_DRAWS` times, then refused;
- language: the instruction the start hands the policy (:mod:`.language`);
- noise: every image the policy gets from then on (:mod:`.images`).

Level 0 applies nothing: the start is the twin's, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from eval_runner.perturbations.distractors import DistractorScenes, SceneSnapshot, restore, snapshot
from eval_runner.perturbations.draw import AxisLevel, episode_generator
from eval_runner.perturbations.images import ImageNoise
from eval_runner.perturbations.language import rewrite
from eval_runner.perturbations.physical import (
    layout_groups,
    layout_regions,
    offset_robot_joints,
    place_layout,
    settled,
)
from eval_runner.perturbations.visual import move_cameras, relight, retexture, texture_library
from rlinf_bench.contracts import Perturbation, PerturbationAxis
from rlinf_bench.robustness import AXIS_SCALES, perturbation_record

if TYPE_CHECKING:
    from eval_runner.env import LiberoEnv
    from eval_runner.scheduler import EpisodeTask
    from rlinf_bench.suites import TaskInfo

__all__ = ["MAX_DRAWS", "PerturbedStart", "ScenePerturbations"]

#: Layout draws tried per episode (interpenetrating or unsettled ones are redrawn) before it is refused.
MAX_DRAWS = 8
#: Blur of the noise axis: Gaussian sigma in pixels per level at 256 px (scaled with the image's width).
BLUR_PX_PER_LEVEL = 0.5
BLUR_AT_PX = 256

Start = Callable[..., dict[str, Any]]
Params = dict[str, Any]


@dataclass(frozen=True)
class PerturbedStart:
    """A perturbed episode's start: the policy's first observation and what the episode records."""

    observation: dict[str, Any]
    record: Perturbation
    instruction: str | None = None  # the instruction the policy reads (language); None: the task's
    refused: str | None = None  # why the episode is not played (no valid layout); None: it is
    env: LiberoEnv | None = None  # the scene the episode plays on (layout: with distractors); None: the task's


def _hooked(start: Start, axis: AxisLevel, hook: str, perturb: Callable[[], Params]) -> PerturbedStart:
    """Start the episode with ``perturb`` run at ``hook`` (a point of the start), recording what it drew."""
    params: Params = {}
    obs = start(**{hook: lambda: params.update(perturb())})
    return PerturbedStart(obs, perturbation_record(axis.axis, axis.level, params))


class ScenePerturbations:
    """One LIBERO scene's perturbations (see the module docstring); holds the running episode's image noise."""

    def __init__(self, suite: str, task: TaskInfo) -> None:
        self.suite = suite
        self.task = task
        self.noise: ImageNoise | None = None
        self.scenes = DistractorScenes()
        self.settle_steps = 0
        self.settle_gripper = -1.0
        self.seed = 0

    def close(self) -> None:
        """Close the scene with distractors held, if any."""
        self.scenes.close()

    def start(self, env: LiberoEnv, episode: EpisodeTask, settle_steps: int, settle_gripper: float) -> PerturbedStart:
        """Start ``episode`` (which has a perturbation) on ``env`` with its axis applied."""
        axis = episode.perturbation
        if axis is None:
            raise ValueError(f"{episode.episode_id} has no perturbation (runner bug)")
        self.noise = None
        self.settle_steps, self.settle_gripper, self.seed = settle_steps, settle_gripper, episode.seed

        def start(**hooks: Callable[[], None]) -> dict[str, Any]:
            return env.start_episode(
                episode.init_state, episode.seed, settle_steps, episode.rng, settle_gripper=settle_gripper, **hooks
            )

        if axis.level == 0:
            return PerturbedStart(start(), perturbation_record(axis.axis, 0))
        rng = episode_generator(episode.seed, self.suite, episode.task_id, episode.init_state, axis)
        magnitude = AXIS_SCALES[axis.axis].magnitude(axis.level)
        apply = _AXES[axis.axis]
        return apply(self, env, start, rng, magnitude, axis)

    def observation(self, obs: dict[str, Any]) -> dict[str, Any]:
        """The running episode's observation as its policy gets it (noised images under the noise axis)."""
        return obs if self.noise is None else self.noise(obs)

    # -- one method per axis: (env, start, rng, magnitude, axis) -> PerturbedStart ---------------------------
    def _camera(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, degrees: float, axis: AxisLevel
    ) -> PerturbedStart:
        domain = env.raw_env.env
        return _hooked(
            start,
            axis,
            "after_reset",
            lambda: move_cameras(env.sim.model._model, list(env.cameras), _objects_height(domain), rng, degrees),
        )

    def _light(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, stops: float, axis: AxisLevel
    ) -> PerturbedStart:
        return _hooked(start, axis, "after_reset", lambda: relight(env.sim.model._model, rng, stops))

    def _texture(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, surfaces: float, axis: AxisLevel
    ) -> PerturbedStart:
        from eval_runner.libero_setup import find_libero_package

        library = texture_library(str(find_libero_package() / "assets" / "textures"))
        return _hooked(
            start,
            axis,
            "after_reset",
            lambda: retexture(env.sim.model._model, env.sim._render_context_offscreen, library, rng, int(surfaces)),
        )

    def _robot_init(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, bound: float, axis: AxisLevel
    ) -> PerturbedStart:
        return _hooked(start, axis, "after_init_state", lambda: offset_robot_joints(env.raw_env.env, rng, bound))

    def _language(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, _: float, axis: AxisLevel
    ) -> PerturbedStart:
        text, kind = rewrite(self.task.language, axis.level, rng)
        record = perturbation_record(axis.axis, axis.level, {"rewrite": kind, "instruction": text})
        return PerturbedStart(start(), record, instruction=text)

    def _noise(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, sigma: float, axis: AxisLevel
    ) -> PerturbedStart:
        obs = start()
        width = max((img.shape[1] for key, img in obs.items() if key.endswith("_image")), default=BLUR_AT_PX)
        blur = round(BLUR_PX_PER_LEVEL * axis.level * width / BLUR_AT_PX, 6)  # the same blur at any resolution
        self.noise = ImageNoise(rng, sigma, blur)
        record = perturbation_record(axis.axis, axis.level, {"sigma": sigma, "blur_px": blur})
        return PerturbedStart(self.noise(obs), record)

    def _layout(
        self, env: LiberoEnv, start: Start, rng: np.random.Generator, distance: float, axis: AxisLevel
    ) -> PerturbedStart:
        captured: list[SceneSnapshot] = []
        obs = start(after_init_state=lambda: captured.append(snapshot(env.sim)))  # the control twin's start
        scene = self.scenes.scene(env, self.seed, self.suite, axis)
        layout = _Layout(scene.env.raw_env.env, rng, distance)
        layout.regions |= dict.fromkeys(scene.distractors.names, scene.area)
        if not layout.groups:
            record = perturbation_record(axis.axis, axis.level, {"moved": "no movable object on the workspace"})
            return PerturbedStart(obs, record)
        while layout.draws < MAX_DRAWS:
            reset_seed = int(rng.integers(2**31))  # the distractors' reset: where LIBERO's sampler puts them first
            obs = scene.env.start_from(
                lambda sim: restore(captured[0], sim),
                reset_seed,
                self.settle_steps,
                settle_gripper=self.settle_gripper,
                after_init_state=layout.place,
            )
            if layout.draw is None:
                break  # every draw left interpenetrated: refused below
            unsettled = settled(layout.domain, layout.draw)
            if not unsettled:
                params = {
                    "moved": ",".join(g for g in layout.groups if g not in scene.distractors.names),
                    "draws": layout.draws,
                    **layout.draw.params(scene.distractors.names),
                }
                record = perturbation_record(axis.axis, axis.level, params)
                return PerturbedStart(obs, record, env=scene.env)
            layout.rejected.append(f"draw {layout.draws} did not settle: {'; '.join(unsettled)}")
        why = f"no physically valid layout in {MAX_DRAWS} draws ({' | '.join(layout.rejected[-3:])})"
        record = perturbation_record(axis.axis, axis.level, {"refused": why, "draws": layout.draws})
        return PerturbedStart(obs, record, refused=why, env=scene.env)


class _Layout:
    """The layout draws of one episode: each start places the next statically valid draw (or none)."""

    def __init__(self, domain: Any, rng: np.random.Generator, distance: float) -> None:
        self.domain = domain
        self.rng = rng
        self.distance = distance
        self.groups = layout_groups(domain)
        self.regions = layout_regions(domain, self.groups)
        self.draws = 0
        self.draw: Any = None
        self.rejected: list[str] = []

    def place(self) -> None:
        """After the initial state is loaded: draw until nothing interpenetrates (the state restored between)."""
        sim = self.domain.sim
        qpos, qvel = sim.data.qpos.copy(), sim.data.qvel.copy()
        self.draw = None
        while self.draws < MAX_DRAWS:
            self.draws += 1
            draw, clash = place_layout(self.domain, self.groups, self.rng, self.distance, self.regions)
            if not clash:
                self.draw = draw
                return
            self.rejected.append(f"draw {self.draws} interpenetrates: {', '.join(clash)}")
            sim.data.qpos[:] = qpos
            sim.data.qvel[:] = qvel
            sim.forward()


def _objects_height(domain: Any) -> float:
    """Mean height of the scene's objects: where the cameras' optical axes meet the workspace."""
    xpos = domain.sim.data.xpos
    heights = [float(xpos[body][2]) for body in domain.obj_body_id.values()]
    return float(np.mean(heights)) if heights else 0.9


_AXES: dict[PerturbationAxis, Callable[..., PerturbedStart]] = {
    PerturbationAxis.LAYOUT: ScenePerturbations._layout,
    PerturbationAxis.CAMERA: ScenePerturbations._camera,
    PerturbationAxis.ROBOT_INIT: ScenePerturbations._robot_init,
    PerturbationAxis.LANGUAGE: ScenePerturbations._language,
    PerturbationAxis.LIGHT: ScenePerturbations._light,
    PerturbationAxis.TEXTURE: ScenePerturbations._texture,
    PerturbationAxis.NOISE: ScenePerturbations._noise,
}
