"""Weight-free RLinf models saved in RLinf's checkpoint layout, for tests of the ``rlinf:`` policy.

Everything goes through the real rlinf package: ``mlp_policy`` is rlinf's own model type; ``ChunkPolicy``
and ``NoisePolicy`` are custom types registered with rlinf's ``register_model`` when this module is
imported (spec option ``plugins=tests.rlinf_fixtures``). Checkpoints are written where RLinf writes
them: ``<root>/checkpoints/global_step_<N>/actor/model_state_dict/full_weights.pt``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import yaml
from rlinf.models import get_model, register_model
from rlinf.models.embodiment.base_policy import BasePolicy
from torch import nn

CHUNK_TYPE = "rlinf_bench_test_chunk"
NOISE_TYPE = "rlinf_bench_test_noise"


def mlp_section(**overrides: Any) -> dict[str, Any]:
    """The ``model`` section of an RLinf run with rlinf's MLP policy on LIBERO's 8-d state."""
    return {
        "model_type": "mlp_policy",
        "precision": "fp32",
        "is_lora": False,
        "obs_dim": 8,
        "action_dim": 7,
        "num_action_chunks": 1,
        "add_value_head": False,
        **overrides,
    }


def chunk_section(chunk: int = 8, **overrides: Any) -> dict[str, Any]:
    """A model section for :class:`ChunkPolicy` (a state policy that predicts ``chunk`` actions per call)."""
    return {
        "model_type": CHUNK_TYPE,
        "precision": "fp32",
        "is_lora": False,
        "action_dim": 7,
        "num_action_chunks": chunk,
        **overrides,
    }


class ChunkPolicy(nn.Module, BasePolicy):
    """A tiny state -> action-chunk network; samples around its mean when asked to (``do_sample=True``)."""

    def __init__(self, action_dim: int, num_action_chunks: int) -> None:
        super().__init__()
        self.action_dim = action_dim
        self.num_action_chunks = num_action_chunks
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, action_dim * num_action_chunks))
        self.calls = 0

    def default_forward(self, **kwargs: Any) -> Any:
        raise NotImplementedError

    def predict_action_batch(self, env_obs: dict[str, Any], do_sample: bool = True, **kwargs: Any) -> Any:
        self.calls += 1
        mean = torch.tanh(self.net(env_obs["states"])).reshape(-1, self.num_action_chunks, self.action_dim)
        actions = mean + torch.randn_like(mean) if do_sample else mean
        return actions * 0.5, {"forward_inputs": {}}


class NoisePolicy(nn.Module, BasePolicy):
    """A flow-style model: its actions are its starting noise (from ``sample_noise``) plus a state term."""

    def __init__(self, num_action_chunks: int) -> None:
        super().__init__()
        self.num_action_chunks = num_action_chunks
        self.proj = nn.Linear(8, 7)

    def default_forward(self, **kwargs: Any) -> Any:
        raise NotImplementedError

    def sample_noise(self, shape: Any, device: Any) -> torch.Tensor:
        return torch.normal(mean=0.0, std=1.0, size=shape, dtype=torch.float32, device=device)

    def predict_action_batch(self, env_obs: dict[str, Any], **kwargs: Any) -> Any:
        states = env_obs["states"]
        noise = self.sample_noise((states.shape[0], self.num_action_chunks, 7), states.device)
        return 0.1 * noise + self.proj(states)[:, None, :], {}


def _build_chunk(cfg: Any, torch_dtype: Any) -> ChunkPolicy:
    return ChunkPolicy(int(cfg.action_dim), int(cfg.num_action_chunks))


def _build_noise(cfg: Any, torch_dtype: Any) -> NoisePolicy:
    return NoisePolicy(int(cfg.num_action_chunks))


register_model(CHUNK_TYPE, _build_chunk, force=True)
register_model(NOISE_TYPE, _build_noise, force=True)


def build(section: dict[str, Any], seed: int = 0) -> Any:
    """The model rlinf's ``get_model`` builds for ``section``, with parameters drawn from ``seed``."""
    from omegaconf import OmegaConf

    torch.manual_seed(seed)
    return get_model(OmegaConf.create({**section, "load_to_device": False}))


def write_checkpoint(root: Path, model: nn.Module, step: int = 100, *, drop: str | None = None) -> Path:
    """Save ``model``'s state dict in RLinf's FSDP layout; returns the ``global_step_<step>`` folder.

    ``drop`` removes one key first (a checkpoint that does not match its config).
    """
    state = model.state_dict()
    if drop is not None:
        state.pop(drop)
    step_dir = root / "checkpoints" / f"global_step_{step}"
    weights = step_dir / "actor" / "model_state_dict" / "full_weights.pt"
    weights.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, weights)
    return step_dir


def write_run_config(
    path: Path, section: dict[str, Any], *, temperature_eval: float = -1.0, ckpt_path: str | None = None
) -> Path:
    """A run config as RLinf saves it (the keys the ``rlinf:`` policy reads, with interpolations like Hydra's)."""
    config = {
        "runner": {"ckpt_path": ckpt_path, "max_epochs": 1},
        "env": {"eval": {"max_episode_steps": 240, "init_params": {"camera_heights": 256, "camera_widths": 256}}},
        "rollout": {
            "model": {"model_path": None, "precision": "${actor.model.precision}"},
            "sampling_params": {
                "do_sample": True,
                "temperature_train": 1.0,
                "temperature_eval": temperature_eval,
                "top_k": 0,
                "top_p": 1.0,
                "max_new_tokens": None,
            },
        },
        "actor": {"model": section},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def write_model_config(path: Path, section: dict[str, Any]) -> Path:
    """A model config file: just the ``model`` section."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(section, sort_keys=False))
    return path
