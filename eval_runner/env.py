"""One LIBERO task environment that renders only the cameras a policy consumes.

On a CPU a camera costs ~5x the physics of a step (measured: physics 35 ms, one 128 px camera 200 ms,
two 376 ms), so the renderer is switched off entirely when the policy needs no images. One instance
is reused for every episode of its task on a worker: building a scene takes 5-40 s.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from eval_runner.envs.published_robot import place_arm_at_initial_joints, starts_from_variant_arm
from eval_runner.init_states import load_init_states
from eval_runner.physics import SplitCounters, computed_once
from eval_runner.policies.base import ACTION_DIM, SETTLE_ACTION, ObservationSpec
from eval_runner.render_context import (
    adopt_render_context,
    drop_mirror_pass,
    renders_skipped,
    restore_renders,
    same_render_assets,
    skip_renders,
)
from eval_runner.scheduler import RngStart, RngState, seeded_state
from rlinf_bench.errors import ConfigError, PolicyError, SimulatorError
from rlinf_bench.suites import TaskInfo

log = logging.getLogger(__name__)

#: Camera used for videos when the policy itself consumes none.
VIDEO_CAMERA = "agentview"


class LiberoEnv:
    """A LIBERO task: reset to fixed initial state *i*, settle, then step until success or the horizon.

    Call :func:`eval_runner.libero_setup.configure_libero` before constructing one.
    """

    def __init__(self, task: TaskInfo, obs_spec: ObservationSpec, *, horizon: int, video: bool = False) -> None:
        try:
            # LIBERO-plus's and LIBERO-PRO's variants are built by their own forks of LIBERO's scene classes.
            wrapper = importlib.import_module(f"{task.package}.{task.package}.envs.env_wrapper")
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise SimulatorError(f"cannot import LIBERO ({exc}); run pip install 'rlinf-bench[libero]'") from exc
        ControlEnv = wrapper.ControlEnv
        self.task = task
        self.obs_spec = obs_spec
        self.horizon = horizon
        self.video = video
        cameras = list(obs_spec.cameras)
        # LIBERO-plus's sensor noise blurs the third-person image at every step, which it expects rendered.
        blurred = task.package == "liberoplus" and "_noise_" in task.name
        if (video or blurred) and VIDEO_CAMERA not in cameras:
            cameras.append(VIDEO_CAMERA)
        self.cameras = tuple(cameras)
        #: only the video reads the images: they are drawn without MuJoCo's mirror pass (see start_episode)
        self.video_only = video and not obs_spec.cameras and not blurred
        render = bool(cameras)
        # A spec without a resolution normally gets the protocol's before it reaches a worker; 256 px is
        # what every reference renders.
        resolution = obs_spec.resolution or 256
        t0 = time.perf_counter()
        self._env: Any = ControlEnv(
            bddl_file_name=str(task.bddl_file),
            use_camera_obs=render,
            has_offscreen_renderer=render,
            camera_names=cameras or [VIDEO_CAMERA],
            camera_heights=resolution,
            camera_widths=resolution,
            # We enforce the horizon ourselves; robosuite's own would raise on the step after it.
            horizon=horizon + 1000,
            ignore_done=True,
        )
        self.init_states = load_init_states(task.init_states_file)
        #: a LIBERO-plus robot-initial-state variant: its arm starts at its own joints, not the loaded state's
        self.variant_arm = starts_from_variant_arm(task)
        # The samplers of articulated objects' initial states (drawers open or closed, stoves on or off) that
        # one scene load adds to LIBERO's list (empty for most tasks): see _reset_as_reference.
        self._property_samplers = list(getattr(self._env.env, "object_property_initializers", []))
        self.setup_s = time.perf_counter() - t0
        self._last_raw: dict[str, Any] = {}
        self.rng_after_reset: RngState | None = None
        self.extra_resets = 0  # resets replayed only to reach an episode's RNG state
        #: render every step and reset even when nobody reads the images: the reference loop's way, which the
        #: render-skipping tests compare against
        self.keep_all_images = False
        #: hand the OpenGL context to the next hard reset's sim when the scene's assets are unchanged
        self.reuse_render_context = True
        self.render_contexts_reused = 0
        #: each MuJoCo sub-step's forward pass computed once instead of robosuite's three (same numbers,
        #: eval_runner.physics); False: robosuite's own loop, which the physics tests compare against
        self.physics_once = True
        self.physics_counters = SplitCounters()

    @property
    def sim(self) -> Any:
        """The MuJoCo simulation (robosuite's MjSim), for scene hooks and tests."""
        return self._env.sim

    @property
    def raw_env(self) -> Any:
        """LIBERO's ControlEnv (for scene hooks and tests)."""
        return self._env

    def start_episode(
        self,
        init_state: int,
        seed: int,
        settle_steps: int,
        rng: RngStart | None = None,
        *,
        settle_gripper: float = -1.0,
        after_reset: Callable[[], None] | None = None,
        after_init_state: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Reset from the reference RNG state, load fixed initial state ``init_state``, settle; return the observation.

        LIBERO's reset draws fixture placements from numpy's global RNG, and the fixed initial state does
        not cover them. With ``rng`` (the scheduler's :class:`RngStart`), the reset starts from the state
        OpenVLA-OFT's loop has before its ``init_state``-th reset after ``env.seed(seed)``; without it,
        from the state right after ``env.seed(seed)``. :attr:`rng_after_reset` is the state the reset left,
        i.e. the one the next initial state's reset starts from.

        A perturbed episode (:mod:`eval_runner.perturbations`) edits the scene at two points: ``after_reset``
        (the new model, before the initial state is loaded and anything rendered) and ``after_init_state``
        (the loaded state, before the settle steps). Neither changes the reset or its RNG state.
        """
        start = rng or RngStart(seed=seed, base_index=0, state=seeded_state(seed))
        if start.base_index > init_state:
            raise SimulatorError(f"RNG base reset {start.base_index} is after initial state {init_state} (runner bug)")
        state = start.state
        # Resets the reference loop ran before this one (known states make these rare; see scheduler.py).
        for reset_index in range(start.base_index, init_state):
            np.random.set_state(state)
            self._reset_as_reference(reset_index)
            state = np.random.get_state(legacy=True)
            self.extra_resets += 1
        np.random.set_state(state)
        self._reset_as_reference(init_state)
        self.rng_after_reset = np.random.get_state(legacy=True)  # type: ignore[assignment]
        if self.video_only:
            drop_mirror_pass(self._env.sim)
        if after_reset is not None:
            after_reset()
        # Only the observation the policy gets is rendered: the last settle step's (a reset rebuilds the sim).
        with self._images_skipped(settle_steps > 0):
            raw = self._env.set_init_state(self.init_states[init_state])
        if self.variant_arm:  # the loaded state holds the base task's arm (eval_runner.envs.published_robot)
            place_arm_at_initial_joints(self._env.env)
        return self._settle(raw, settle_steps, settle_gripper, after_init_state)

    def start_from(
        self,
        load_state: Callable[[Any], None],
        reset_seed: int,
        settle_steps: int,
        *,
        settle_gripper: float = -1.0,
        after_init_state: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Reset, load a state with ``load_state`` (called with the MjSim) instead of an initial state of the
        task's file, then settle; return the observation. (A layout's scene with distractors starts from its
        control twin's state this way: :mod:`eval_runner.perturbations.distractors`.)

        The reset is seeded with ``reset_seed`` and numpy's global RNG is restored after it, so the reference
        RNG chain (:meth:`start_episode`) is untouched."""
        saved = np.random.get_state()
        np.random.seed(reset_seed)
        try:
            self._env.env.object_property_initializers = list(self._property_samplers)
            self._reset_without_images()
        finally:
            np.random.set_state(saved)
        if self.video_only:
            drop_mirror_pass(self._env.sim)
        load_state(self.sim)
        with self._images_skipped(settle_steps > 0):
            self._env.env.sim.forward()
            self._env.check_success()
            self._env._post_process()
            self._env._update_observables(force=True)
            raw = self._env.env._get_observations()
        return self._settle(raw, settle_steps, settle_gripper, after_init_state)

    def _settle(
        self,
        raw: dict[str, Any],
        settle_steps: int,
        settle_gripper: float,
        after_init_state: Callable[[], None] | None,
    ) -> dict[str, Any]:
        """Apply ``after_init_state`` to the loaded state, then the settle steps; return the observation."""
        if after_init_state is not None:
            after_init_state()
        if (self.variant_arm or after_init_state is not None) and not settle_steps:
            raw = self._env.env._get_observations(force_update=True)  # the state changed after it was observed
        settle = np.asarray(SETTLE_ACTION, dtype=np.float64)
        settle[-1] = settle_gripper
        for i in range(settle_steps):
            with self._images_skipped(i < settle_steps - 1), self._physics_computed_once():
                raw, _, _, _ = self._env.step(settle)
        self._last_raw = raw
        return self.observation(raw)

    def _reset_as_reference(self, reset_index: int) -> None:
        """The reference loop's reset number ``reset_index`` (0: the first after its env was built).

        LIBERO appends a task's open/close and on/off samplers to a list at every hard reset and never
        clears it, and every reset draws one value from each sampler in the list before it places the
        fixtures. In the reference loop (one env reset for episode after episode) reset *k* therefore makes
        k + 2 groups of draws, and the fixtures it places depend on *k* as well as on the RNG state; a
        worker's env has its own count of earlier resets. Before each reset the list is set to the k + 1
        groups the reference env holds then (a sampler holds only its object's name and joint range, so any
        copy draws alike), and the reset adds the last. Measured on libero_spatial task 4 before this: the
        cabinet 0.3-1.4 cm away between starts of one initial state on one env.
        """
        env = self._env.env
        group = self._property_samplers
        if not group:
            self._reset_without_images()
            return
        env.object_property_initializers = group * (reset_index + 1)
        self._reset_without_images()
        held = len(env.object_property_initializers)
        if held != len(group) * (reset_index + 2):
            raise SimulatorError(
                f"LIBERO's reset of task {self.task.name} left {held} articulation samplers where the reference "
                f"loop's reset {reset_index} leaves {len(group) * (reset_index + 2)}: this LIBERO version places "
                "scenes differently from the one the harness was checked against (tests/sim/test_reference_fidelity.py)"
            )

    def _reset_without_images(self) -> None:
        """LIBERO's hard reset (a new scene from the RNG), without rendering and keeping the render context.

        The reset builds a new MjSim from a new XML (the fixtures move), and robosuite would then build a
        new OpenGL context and upload every mesh and texture again: the larger part of a reset (measured
        on a CPU: 1.1 of 1.8 s), and work that 15 workers on one GPU queue for. The scene's assets do
        not change between resets, so the context is handed to the new sim when they are equal
        (:func:`same_render_assets`), and rebuilt as before when they are not. The
        observables robosuite samples at the end of a reset are not rendered either: nobody reads them.
        """
        env = self._env.env
        old_sim = env.sim
        kept = old_sim._render_context_offscreen if self.reuse_render_context and old_sim is not None else None
        if kept is not None:
            old_sim._render_context_offscreen = None  # robosuite's free() would delete it with the old sim
        build = env._initialize_sim

        def initialize_then_adopt(*args: Any, **kwargs: Any) -> Any:
            nonlocal kept
            out = build(*args, **kwargs)
            if kept is not None:
                if same_render_assets(kept.model._model, env.sim.model._model):
                    adopt_render_context(kept, env.sim)
                    self.render_contexts_reused += 1
                kept = None  # not adopted: freed now, while its own GL context is still the current one
            skip_renders(env.sim)
            return out

        env._initialize_sim = initialize_then_adopt
        try:
            self._env.reset()
        finally:
            del env._initialize_sim
            kept = None
            restore_renders(self._env.sim)

    def _images_skipped(self, skip: bool) -> contextlib.AbstractContextManager[None]:
        if skip and self.cameras and not self.keep_all_images:
            return renders_skipped(self._env.sim)
        return contextlib.nullcontext()

    def _physics_computed_once(self) -> contextlib.AbstractContextManager[SplitCounters | None]:
        if self.physics_once:
            return computed_once(self._env.sim, self.physics_counters)
        return contextlib.nullcontext()

    def refresh_observation(self) -> dict[str, Any]:
        """Recompute the observation after the scene was changed directly (scene hooks)."""
        self._env.sim.forward()
        raw = self._env.env._get_observations(force_update=True)
        self._last_raw = raw
        return self.observation(raw)

    def step(self, action: Any, *, render: bool = True) -> tuple[dict[str, Any], bool]:
        """Apply one policy action; returns (observation, success). Success is LIBERO's own check.

        ``render=False``: nobody will look at this step's images (a step inside an action chunk), so the
        cameras are not rendered; the observation's images are then blank. The physics, and the images
        of the next rendered step, are exactly those of a step that rendered (tested).
        """
        act = np.asarray(action, dtype=np.float64).reshape(-1)
        if act.shape != (ACTION_DIM,) or not np.all(np.isfinite(act)):
            raise PolicyError(
                f"policy returned action {act.tolist()!r} for task {self.task.name}: need {ACTION_DIM} finite values "
                "(OSC_POSE delta xyz, delta rpy, gripper)"
            )
        with self._images_skipped(not render), self._physics_computed_once():
            raw, _, done, _ = self._env.step(act)
        self._last_raw = raw
        return self.observation(raw), bool(done)

    def check_success(self) -> bool:
        return bool(self._env.check_success())

    def observation(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Keep exactly what the policy's ObservationSpec asks for."""
        obs: dict[str, Any] = {}
        for cam in self.obs_spec.cameras:
            obs[f"{cam}_image"] = np.ascontiguousarray(raw[f"{cam}_image"], dtype=np.uint8)
        for key in self.obs_spec.proprio:
            if key not in raw:
                available = sorted(k for k in raw if not k.endswith("_image"))
                raise ConfigError(
                    f"policy asks for observation {key!r}, which LIBERO does not produce; use one of {available}"
                )
            obs[key] = np.asarray(raw[key], dtype=np.float32)
        if self.obs_spec.privileged:
            from eval_runner.expert_state import privileged_state

            obs["privileged_state"] = privileged_state(self._env.env)
        return obs

    def video_frame(self) -> np.ndarray | None:
        """The current video camera image, upright (LIBERO renders upside down)."""
        img = self._last_raw.get(f"{VIDEO_CAMERA}_image")
        return None if img is None else np.ascontiguousarray(img[::-1, ::-1])

    def close(self) -> None:
        """Free the renderer explicitly: left to interpreter exit, PyOpenGL prints EGLError noise."""
        env = getattr(self, "_env", None)
        if env is not None:
            env.close()
            self._env = None


def load_hook(spec: str) -> Callable[[LiberoEnv], None]:
    """Resolve a ``module:function`` scene hook (test and diagnostics only)."""
    module_name, _, func_name = spec.partition(":")
    if not module_name or not func_name:
        raise ConfigError(f"scene hook {spec!r} must look like 'package.module:function'")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load scene hook {spec!r}: {exc}") from exc
    if not callable(func):
        raise ConfigError(f"scene hook {spec!r} is not callable")
    return func
