"""The checkpoint-reading demo policy: a tiny MLP from proprioception (and optional image statistics) to actions.

Its only purpose is to make the demo *honest*: the actions depend on parameters read from the
checkpoint under evaluation, so a different checkpoint gives different episodes, and a broken one
fails loudly. It scores ~0 on LIBERO; that is expected.

Parameters (a torch state dict in ``actor/model_state_dict/full_weights.pt``), with ``H`` hidden units:

====================  ===========  ==================================================
key                   shape        meaning
====================  ===========  ==================================================
``input_mean``        ``[9]``      proprio normalisation (eef pos 3, quat 4, gripper 2)
``input_std``         ``[9]``      proprio normalisation (must be > 0)
``net.0.weight``      ``[H, 9]``   hidden layer
``net.0.bias``        ``[H]``
``net.2.weight``      ``[7, H]``   output layer
``net.2.bias``        ``[7]``
``image_proj.weight`` ``[7, 3]``   per-camera mean-RGB feature to action (shared by cameras)
``action_scale``      ``[7]``      scale of the tanh output for the 6 arm dimensions
====================  ===========  ==================================================

Inference runs in numpy (the weights are converted once), so the policy costs microseconds per step
and a camera-less run goes at physics speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy, sha256_file
from rlinf_bench.errors import CheckpointError, PolicyError

PROPRIO_KEYS: tuple[str, ...] = ("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos")
PROPRIO_DIMS: tuple[int, ...] = (3, 4, 2)
IN_DIM = sum(PROPRIO_DIMS)
IMAGE_FEATURES = 3  # mean R, G, B of a strided downsample
DEFAULT_HIDDEN = 32
# Downsample images to about this many pixels per side before averaging: the statistic stays
# cheap at any resolution while still reading real rendered pixels.
_IMAGE_GRID = 8

FIX_HINT = (
    "write a demo checkpoint with `python -m eval_runner.demo_checkpoint DIR`, or evaluate this checkpoint with "
    "a policy that reads it (--policy SPEC; `rlinf-bench evaluate --help` lists every kind)"
)


def expected_shapes(hidden: int) -> dict[str, tuple[int, ...]]:
    """The state-dict keys and shapes the demo policy reads, for ``hidden`` units."""
    return {
        "input_mean": (IN_DIM,),
        "input_std": (IN_DIM,),
        "net.0.weight": (hidden, IN_DIM),
        "net.0.bias": (hidden,),
        "net.2.weight": (ACTION_DIM, hidden),
        "net.2.bias": (ACTION_DIM,),
        "image_proj.weight": (ACTION_DIM, IMAGE_FEATURES),
        "action_scale": (ACTION_DIM,),
    }


def init_demo_state_dict(seed: int = 0, hidden: int = DEFAULT_HIDDEN) -> dict[str, Any]:
    """Fresh demo parameters as a torch state dict (what a 'training run' would save)."""
    import torch

    gen = torch.Generator().manual_seed(seed)

    def normal(*shape: int, std: float) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float32) * std

    return {
        # Typical LIBERO values: the arm works ~1 m above the floor, gripper fingers ±0.04 m.
        "input_mean": torch.tensor([-0.1, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.02, -0.02]),
        "input_std": torch.tensor([0.15, 0.15, 0.15, 0.5, 0.5, 0.5, 0.5, 0.02, 0.02]),
        "net.0.weight": normal(hidden, IN_DIM, std=1.0 / IN_DIM**0.5),
        "net.0.bias": normal(hidden, std=0.1),
        "net.2.weight": normal(ACTION_DIM, hidden, std=1.0 / hidden**0.5),
        "net.2.bias": normal(ACTION_DIM, std=0.1),
        "image_proj.weight": normal(ACTION_DIM, IMAGE_FEATURES, std=1.0),
        "action_scale": torch.tensor([0.5] * 6 + [1.0]),
    }


def load_demo_weights(path: Path) -> dict[str, np.ndarray]:
    """Read and validate demo parameters; any problem is a CheckpointError naming the file and the fix."""
    import torch

    if not path.is_file():
        raise CheckpointError(f"demo policy weights {path} do not exist; {FIX_HINT}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises RuntimeError, UnpicklingError, EOFError... for bad files
        raise CheckpointError(
            f"demo policy weights {path} are unreadable ({type(exc).__name__}: {exc}); the file is corrupt or "
            f"truncated (was it still being written?); {FIX_HINT}"
        ) from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} holds a {type(state).__name__}, not a state dict; {FIX_HINT}")
    hidden_weight = state.get("net.0.weight")
    hidden = int(hidden_weight.shape[0]) if isinstance(hidden_weight, torch.Tensor) and hidden_weight.ndim else 0
    shapes = expected_shapes(hidden)
    missing = [key for key in shapes if key not in state]
    if missing:
        raise CheckpointError(
            f"{path} is not a demo policy state dict: missing {', '.join(missing)} "
            f"(found {', '.join(sorted(map(str, state))[:8]) or 'no keys'}); {FIX_HINT}"
        )
    arrays: dict[str, np.ndarray] = {}
    for key, shape in shapes.items():
        tensor = state[key]
        if not isinstance(tensor, torch.Tensor) or tuple(tensor.shape) != shape:
            got = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise CheckpointError(f"{path}: {key} has shape {got}, the demo policy needs {shape}; {FIX_HINT}")
        array = tensor.detach().to(torch.float32).numpy().copy()
        if not np.isfinite(array).all():
            raise CheckpointError(
                f"{path}: {key} contains NaN or inf; the training run diverged or the file is corrupt"
            )
        arrays[key] = array
    if (arrays["input_std"] <= 0).any():
        raise CheckpointError(f"{path}: input_std must be > 0 everywhere; {FIX_HINT}")
    return arrays


class DemoPolicy(Policy):
    """Deterministic MLP policy whose parameters come from a checkpoint (see module docstring)."""

    def __init__(self, weights_path: Path, *, spec: str, cameras: tuple[str, ...] = (), resolution: int = 128) -> None:
        self.weights_path = weights_path
        self.spec = spec
        self.params = load_demo_weights(weights_path)
        self.weights_sha256 = sha256_file(weights_path)
        self.obs_spec = ObservationSpec(cameras=cameras, resolution=resolution, proprio=PROPRIO_KEYS)

    def features(self, obs: dict[str, Any]) -> np.ndarray:
        """Normalised proprio features ``[B, 9]``; a missing or mis-shaped key is a PolicyError."""
        parts = []
        for key, dim in zip(PROPRIO_KEYS, PROPRIO_DIMS, strict=True):
            if key not in obs:
                raise PolicyError(f"demo policy needs observation {key!r}; the batch has {sorted(obs)}")
            value = np.asarray(obs[key], dtype=np.float32)
            if value.ndim != 2 or value.shape[1] != dim:
                raise PolicyError(f"demo policy: observation {key!r} has shape {value.shape}, expected [B, {dim}]")
            parts.append(value)
        x = np.concatenate(parts, axis=1)
        return (x - self.params["input_mean"]) / self.params["input_std"]

    def image_features(self, obs: dict[str, Any], camera: str) -> np.ndarray:
        """Mean RGB in [-0.5, 0.5] of a strided downsample of one camera's images, ``[B, 3]``."""
        key = f"{camera}_image"
        if key not in obs:
            raise PolicyError(f"demo policy needs observation {key!r} (camera {camera}); the batch has {sorted(obs)}")
        images = np.asarray(obs[key])
        if images.ndim != 4 or images.shape[-1] != 3:
            raise PolicyError(f"demo policy: {key} has shape {images.shape}, expected [B, H, W, 3]")
        stride = max(1, images.shape[1] // _IMAGE_GRID)
        small = images[:, ::stride, ::stride, :].astype(np.float32)
        return small.mean(axis=(1, 2)) / 255.0 - 0.5

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        x = self.features(obs)
        images = [self.image_features(obs, camera) for camera in self.obs_spec.cameras]
        # One row at a time: a batched matmul's rounding depends on the batch size, and an
        # episode's actions must not depend on which other episodes share its vector step.
        rows = [self._act_row(x[i], [f[i] for f in images]) for i in range(x.shape[0])]
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, ACTION_DIM), np.float32)

    def _act_row(self, x: np.ndarray, images: list[np.ndarray]) -> np.ndarray:
        p = self.params
        hidden = np.tanh(p["net.0.weight"] @ x + p["net.0.bias"])
        out = p["net.2.weight"] @ hidden + p["net.2.bias"]
        for feats in images:
            out = out + p["image_proj.weight"] @ feats
        action = np.tanh(out) * p["action_scale"]
        # LIBERO's gripper command is binary: -1 open, +1 close.
        action[-1] = 1.0 if out[-1] > 0.0 else -1.0
        return np.asarray(action)

    def parameter_count(self) -> int:
        return int(sum(a.size for a in self.params.values()))

    def describe(self) -> dict[str, Any]:
        return {
            "class": type(self).__name__,
            "spec": self.spec,
            "weights_file": str(self.weights_path),
            "weights_sha256": self.weights_sha256,
            "parameters": self.parameter_count(),
            "obs_spec": self.obs_spec.model_dump(mode="json"),
        }
