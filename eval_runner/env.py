"""One LIBERO task environment that renders only the cameras a policy consumes.

On a CPU a camera costs ~5x the physics of a step (measured: physics 35 ms, one 128 px camera 200 ms,
two 376 ms), so the renderer is switched off entirely when the policy needs no images. One instance
is reused for every episode of its task on a worker: building a scene takes 5-40 s.
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, SETTLE_ACTION, ObservationSpec
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
        import torch  # LIBERO's init states are torch pickles

        try:
            from libero.libero.envs.env_wrapper import ControlEnv
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise SimulatorError(f"cannot import LIBERO ({exc}); run pip install 'rlinf-bench[libero]'") from exc
        self.task = task
        self.obs_spec = obs_spec
        cameras = list(obs_spec.cameras)
        if video and VIDEO_CAMERA not in cameras:
            cameras.append(VIDEO_CAMERA)
        self.cameras = tuple(cameras)
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
        self.init_states = torch.load(task.init_states_file, weights_only=False)
        self.setup_s = time.perf_counter() - t0
        self._last_raw: dict[str, Any] = {}
        self.rng_after_reset: RngState | None = None
        self.extra_resets = 0  # resets replayed only to reach an episode's RNG state

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
    ) -> dict[str, Any]:
        """Reset from the reference RNG state, load fixed initial state ``init_state``, settle; return the observation.

        LIBERO's reset draws fixture placements from numpy's global RNG, and the fixed initial state does
        not cover them. With ``rng`` (the scheduler's :class:`RngStart`), the reset starts from the state
        OpenVLA-OFT's loop has before its ``init_state``-th reset after ``env.seed(seed)``; without it,
        from the state right after ``env.seed(seed)``. :attr:`rng_after_reset` is the state the reset left,
        i.e. the one the next initial state's reset starts from.
        """
        if not 0 <= init_state < len(self.init_states):
            raise ConfigError(
                f"initial state {init_state} out of range for task {self.task.name}: "
                f"it has {len(self.init_states)} (use --trials <= {len(self.init_states)})"
            )
        start = rng or RngStart(seed=seed, base_index=0, state=seeded_state(seed))
        if start.base_index > init_state:
            raise SimulatorError(f"RNG base reset {start.base_index} is after initial state {init_state} (runner bug)")
        state = start.state
        # Resets the reference loop ran before this one (known states make these rare; see scheduler.py).
        for _ in range(init_state - start.base_index):
            np.random.set_state(state)
            self._env.reset()
            state = np.random.get_state(legacy=True)  # type: ignore[assignment]
            self.extra_resets += 1
        np.random.set_state(state)
        self._env.reset()
        self.rng_after_reset = np.random.get_state(legacy=True)  # type: ignore[assignment]
        raw = self._env.set_init_state(self.init_states[init_state])
        settle = np.asarray(SETTLE_ACTION, dtype=np.float64)
        settle[-1] = settle_gripper
        for _ in range(settle_steps):
            raw, _, _, _ = self._env.step(settle)
        self._last_raw = raw
        return self.observation(raw)

    def refresh_observation(self) -> dict[str, Any]:
        """Recompute the observation after the scene was changed directly (scene hooks)."""
        self._env.sim.forward()
        raw = self._env.env._get_observations(force_update=True)
        self._last_raw = raw
        return self.observation(raw)

    def step(self, action: Any) -> tuple[dict[str, Any], bool]:
        """Apply one policy action; returns (observation, success). Success is LIBERO's own check."""
        act = np.asarray(action, dtype=np.float64).reshape(-1)
        if act.shape != (ACTION_DIM,) or not np.all(np.isfinite(act)):
            raise PolicyError(
                f"policy returned action {act.tolist()!r} for task {self.task.name}: need {ACTION_DIM} finite values "
                "(OSC_POSE delta xyz, delta rpy, gripper)"
            )
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
