"""``builtin:`` policies: ``zero``, ``random``, the checkpoint-reading ``demo`` and the scripted ``expert``.

``zero`` and ``random`` consume no observations at all (no cameras, no proprio) so they measure the
harness at pure physics speed; ``demo`` reads its parameters from the checkpoint under evaluation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, SETTLE_ACTION, ObservationSpec, Policy
from eval_runner.policies.checks import batch_size
from eval_runner.policies.factory import SCHEMES, Registry, take_options
from eval_runner.policies.spec import PolicySpec
from rlinf_bench.errors import CheckpointError, PolicyError

BuiltinFactory = Callable[[PolicySpec, Path | None], Policy]
BUILTINS: Registry[BuiltinFactory] = Registry("builtin policy")


@SCHEMES.register("builtin")
def _load_builtin(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    return BUILTINS.get(spec.target, context=spec.raw)(spec, checkpoint_dir)


class ZeroPolicy(Policy):
    """No motion, gripper open: LIBERO's settle action on every step.

    It consumes nothing by default (pure physics speed); ``obs_spec`` makes it ask for cameras it then
    ignores, which measures the harness with rendering and image transport at a policy's cost of zero.
    """

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def __init__(self, spec: str = "builtin:zero", obs_spec: ObservationSpec | None = None) -> None:
        self.spec = spec
        if obs_spec is not None:
            self.obs_spec = obs_spec

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        return np.tile(np.asarray(SETTLE_ACTION, dtype=np.float32), (batch_size(obs), 1))

    def describe(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "spec": self.spec, "parameters": 0}


class RandomPolicy(Policy):
    """Uniform arm deltas in [-scale, scale] and a random binary gripper, seeded per episode.

    Each episode draws from its own generator seeded by ``(seed, sha256(episode_id))``, so an
    episode's actions do not depend on which other episodes share its batch or on the worker count.
    """

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def __init__(self, *, seed: int = 0, scale: float = 1.0, spec: str = "builtin:random") -> None:
        if not 0.0 < scale <= 1.0:
            raise PolicyError(f"policy spec {spec!r}: scale={scale} must be in (0, 1]")
        self.seed = seed
        self.scale = scale
        self.spec = spec
        self._rngs: dict[str, np.random.Generator] = {}

    def _rng(self, episode_id: str) -> np.random.Generator:
        rng = self._rngs.get(episode_id)
        if rng is None:
            digest = int.from_bytes(hashlib.sha256(episode_id.encode()).digest()[:8], "little")
            rng = self._rngs[episode_id] = np.random.default_rng([self.seed, digest])
        return rng

    def reset(self, episode_ids: list[str]) -> None:
        for episode_id in episode_ids:
            self._rngs.pop(episode_id, None)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        batch_size(obs)
        actions = np.empty((len(obs["episode_id"]), ACTION_DIM), dtype=np.float32)
        for row, episode_id in enumerate(obs["episode_id"]):
            draw = self._rng(str(episode_id)).uniform(-1.0, 1.0, size=ACTION_DIM)
            actions[row, :-1] = draw[:-1] * self.scale
            actions[row, -1] = 1.0 if draw[-1] > 0.0 else -1.0
        return actions

    def describe(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "spec": self.spec, "seed": self.seed, "scale": self.scale}


@BUILTINS.register("zero")
def _zero(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    options = take_options(spec, {"cameras": str, "resolution": int})
    if not options:
        return ZeroPolicy(spec=spec.raw)
    cameras = tuple(c.strip() for c in str(options.get("cameras", "")).split(",") if c.strip())
    resolution = options.get("resolution", 128)
    if not 16 <= resolution <= 1024:
        raise PolicyError(f"policy spec {spec.raw!r}: resolution={resolution} must be between 16 and 1024 pixels")
    return ZeroPolicy(spec=spec.raw, obs_spec=ObservationSpec(cameras=cameras, resolution=resolution, proprio=()))


@BUILTINS.register("random")
def _random(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    options = take_options(spec, {"seed": int, "scale": float})
    return RandomPolicy(spec=spec.raw, **options)


@BUILTINS.register("demo")
def _demo(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    from eval_runner.policies.demo_mlp import FIX_HINT, DemoPolicy
    from rlinf_bench.checkpoints.layouts import find_weights

    options = take_options(spec, {"cameras": str, "resolution": int})
    if checkpoint_dir is None:
        raise CheckpointError(
            f"policy {spec.raw!r} reads its parameters from the checkpoint under evaluation: pass --checkpoint "
            f"(a global_step_<N> directory or s3:// URI); {FIX_HINT}"
        )
    if checkpoint_dir.is_file():
        weights = checkpoint_dir  # a weights file given directly
    elif not checkpoint_dir.exists():
        raise CheckpointError(f"checkpoint {checkpoint_dir} does not exist; check the --checkpoint path")
    else:
        weights = find_weights(checkpoint_dir)
    cameras = tuple(c.strip() for c in str(options.get("cameras", "")).split(",") if c.strip())
    resolution = options.get("resolution", 128)
    if not 16 <= resolution <= 1024:
        raise PolicyError(f"policy spec {spec.raw!r}: resolution={resolution} must be between 16 and 1024 pixels")
    return DemoPolicy(weights, spec=spec.raw, cameras=cameras, resolution=resolution)


@BUILTINS.register("expert")
def _expert(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    from eval_runner.policies.expert import ExpertPolicy

    options = take_options(spec, {"noise": float, "hesitate": float, "seed": int, "settings": str})
    source = options.pop("settings", "spec")
    if source == "spec":
        return ExpertPolicy(spec=spec.raw, **options)
    if source != "checkpoint":
        raise PolicyError(f"policy spec {spec.raw!r}: settings={source!r}; valid: spec (default), checkpoint")
    return _expert_from_checkpoint(spec, checkpoint_dir, options)


def _expert_from_checkpoint(spec: PolicySpec, checkpoint_dir: Path | None, options: dict[str, Any]) -> Policy:
    # The demo's checkpoints carry the expert's settings: two steps of one experiment that behave differently.
    from eval_runner.expert_checkpoint import read_settings
    from eval_runner.policies.expert import ExpertPolicy

    if options:
        raise PolicyError(
            f"policy spec {spec.raw!r}: settings=checkpoint reads {', '.join(sorted(options))} from the checkpoint; "
            "drop them from the spec, or drop settings=checkpoint"
        )
    if checkpoint_dir is None:
        raise CheckpointError(
            f"policy {spec.raw!r} reads the expert's settings from the checkpoint under evaluation: pass --checkpoint"
        )
    settings, digest = read_settings(checkpoint_dir)
    policy = ExpertPolicy(spec=spec.raw, noise=settings.noise, hesitate=settings.hesitate, seed=settings.seed)
    policy.settings_sha256 = digest
    return policy
