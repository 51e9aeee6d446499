"""Reading an RLinf config and building its model the way RLinf's own rollout worker does.

RLinf 0.3's Hugging Face rollout worker (``workers/rollout/hf/huggingface_worker.py``) builds the eval
model from ``actor.model`` with ``rollout.model.precision`` and ``rollout.model.model_path`` laid over
it, calls ``rlinf.models.get_model``, then loads ``runner.ckpt_path`` (a ``full_weights.pt``) with a
strict ``load_state_dict``. This module does the same, but turns every failure into an error that names
the input and the fix, and decides what "greedy" means for the model type (see :func:`eval_kwargs`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_runner.policies.base import sha256_file
from rlinf_bench.errors import CheckpointError, PolicyError

#: Model types whose ``predict_action_batch`` takes ``mode="eval"`` at evaluation (RLinf's worker passes
#: only that); every other type gets the sampling parameters, with ``do_sample`` deciding sampling.
MODE_EVAL_TYPES = frozenset(
    {"openpi", "mlp_policy", "gr00t", "gr00t_n1d6", "gr00t_n1d7", "abot_m0", "dreamzero", "cnn_policy", "cfg_model"}
)
#: Model types whose LIBERO gripper output is [0, 1] with 1 = open (``envs/action_utils.py``,
#: ``prepare_actions_for_libero``): RLinf maps it to LIBERO's -1 open / +1 close.
OPENVLA_GRIPPER_TYPES = frozenset({"openvla", "openvla_oft", "gr00t_n1d6", "gr00t_n1d7"})
#: How many camera images each model type reads; types not listed get both LIBERO cameras.
STATE_ONLY_TYPES = frozenset({"mlp_policy"})
#: What to install when a model type's code is missing: RLinf's VLA model code is not in the rlinf wheel.
OPENVLA_HINT = (
    "OpenVLA / OpenVLA-OFT need transformers (`pip install 'rlinf[embodied]==0.3.0'`) and the git-only "
    "`prismatic` package (OpenVLA-OFT's model code): run RLinf's "
    "`bash requirements/install.sh embodied --model openvla-oft --env maniskill_libero`"
)
OPENPI_HINT = (
    "pi0 / pi0.5 need the `openpi` package with RLinf's patched transformers: run RLinf's "
    "`bash requirements/install.sh embodied --model openpi --env maniskill_libero` "
    "(or `pip install rlinf-openpi==0.1.1`, RLinf's build of openpi, on a CUDA machine)"
)
MODEL_CODE_HINTS = {
    "openvla": OPENVLA_HINT,
    "openvla_oft": OPENVLA_HINT,
    "openpi": OPENPI_HINT,
    "cfg_model": OPENPI_HINT,
}
PACKAGE_HINTS = {
    "prismatic": OPENVLA_HINT,
    "openpi": OPENPI_HINT,
    "transformers": "`pip install 'rlinf[embodied]==0.3.0'` (transformers, peft, timm)",
    "peft": "`pip install 'rlinf[embodied]==0.3.0'` (transformers, peft, timm)",
    "timm": "`pip install 'rlinf[embodied]==0.3.0'` (transformers, peft, timm)",
}
# In a checkout rlinf lives in .venv-rlinf, not .venv (its antlr4 pin breaks moto): name both routes.
INSTALL_HINT = (
    "install it with `pip install 'rlinf-bench[rlinf]'` (rlinf 0.3.0); in a checkout, `make setup-rlinf` "
    "and run .venv-rlinf/bin/rlinf-bench (docs/evaluate-rlinf.md)"
)


@dataclass
class RlinfConfig:
    """What the ``rlinf:`` policy needs from a config file, after the spec's overrides."""

    path: Path
    sha256: str
    kind: str  # "run" (a run's saved config, actor.model inside) or "model" (a model section)
    model: dict[str, Any]
    sampling: dict[str, Any] = field(default_factory=dict)
    ckpt_path: str | None = None  # runner.ckpt_path of a run config
    resolution: int | None = None  # env.eval.init_params.camera_heights of a run config

    @property
    def model_type(self) -> str:
        return str(self.model["model_type"])

    @property
    def chunk_size(self) -> int:
        return int(self.model.get("num_action_chunks", 1) or 1)


def rlinf_version() -> str:
    """The installed rlinf version, or a PolicyError saying how to install it."""
    try:
        return importlib.metadata.version("rlinf")
    except importlib.metadata.PackageNotFoundError:
        raise PolicyError(f"the rlinf: policy needs the rlinf package; {INSTALL_HINT}") from None


def load_config(path: Path, overrides: dict[str, Any]) -> RlinfConfig:
    """Read a run config (``actor.model`` inside) or a model config (``model_type`` at the top or under ``model``).

    ``overrides`` (``model_path``, ``precision``) are laid over the model section last, as RLinf lays
    ``rollout.model`` over ``actor.model``.
    """
    from omegaconf import DictConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    if not path.is_file():
        raise PolicyError(f"rlinf config {path} does not exist; pass the run's saved config or a model config file")
    try:
        root = OmegaConf.load(path)
    except Exception as exc:  # yaml.YAMLError, OmegaConf errors: the file is not a config
        raise PolicyError(f"rlinf config {path} is not a readable YAML config: {type(exc).__name__}: {exc}") from exc
    if not isinstance(root, DictConfig):
        raise PolicyError(f"rlinf config {path} holds a list, not a mapping with a model section")
    try:
        kind, model, sampling, ckpt, resolution = _sections(root)
    except OmegaConfBaseException as exc:  # an interpolation that cannot be resolved
        raise PolicyError(f"rlinf config {path}: cannot resolve {exc}; fix or remove that key") from exc
    if kind is None:
        raise PolicyError(
            f"rlinf config {path} has no model section: expected `actor.model` (a run's saved config) or "
            "`model_type` (a model config, the `model` section of a run)"
        )
    if not model.get("model_type"):
        raise PolicyError(f"rlinf config {path}: the model section has no model_type")
    model.update({k: v for k, v in overrides.items() if v is not None})
    return RlinfConfig(path, sha256_file(path), kind, model, sampling, ckpt, resolution)


def _sections(root: Any) -> tuple[str | None, dict[str, Any], dict[str, Any], str | None, int | None]:
    from omegaconf import OmegaConf

    def section(key: str) -> dict[str, Any]:
        node = OmegaConf.select(root, key)
        if node is None:
            return {}
        container = OmegaConf.to_container(node, resolve=True)
        return {str(k): v for k, v in container.items()} if isinstance(container, dict) else {}

    if OmegaConf.select(root, "actor.model") is not None:
        model = section("actor.model")
        rollout_model = section("rollout.model")
        for key in ("precision", "model_path"):
            if rollout_model.get(key) is not None:
                model[key] = rollout_model[key]
        ckpt = OmegaConf.select(root, "runner.ckpt_path")
        height = OmegaConf.select(root, "env.eval.init_params.camera_heights")
        return "run", model, section("rollout.sampling_params"), ckpt or None, int(height) if height else None
    if OmegaConf.select(root, "model_type") is not None:
        sampling = section("sampling_params") or section("rollout.sampling_params")
        container = OmegaConf.to_container(root, resolve=True)
        top = dict(container) if isinstance(container, dict) else {}
        model = {str(k): v for k, v in top.items() if k not in ("sampling_params", "rollout")}
        return "model", model, sampling, None, None
    if OmegaConf.select(root, "model.model_type") is not None:
        sampling = section("sampling_params") or section("rollout.sampling_params")
        return "model", section("model"), sampling, None, None
    return None, {}, {}, None, None


@dataclass(frozen=True)
class Greedy:
    """The decoding the ``rlinf:`` policy forces, and what it overrode in the config."""

    kwargs: dict[str, Any]  # passed to predict_action_batch
    meaning: str
    override: dict[str, Any] | None  # None when the config already asked for greedy


def eval_kwargs(config: RlinfConfig) -> Greedy:
    """Greedy decoding for the config's model type, and the override when the config asked for sampling.

    RLinf samples at eval exactly when ``rollout.sampling_params.temperature_eval > 0`` (``do_sample``
    is ignored at eval). Types in :data:`MODE_EVAL_TYPES` take ``mode="eval"`` instead, which RLinf
    passes whatever the temperature; the others get ``do_sample=False`` (argmax over action tokens).
    """
    sampling = config.sampling
    temperature = sampling.get("temperature_eval")
    override = None
    if temperature is not None and float(temperature) > 0:
        override = {
            "key": "rollout.sampling_params.temperature_eval",
            "config_value": float(temperature),
            "used": "greedy (sampling off)",
        }
    if config.model_type in MODE_EVAL_TYPES:
        meaning = 'mode="eval": the deterministic head (mean action); flow models: zero noise in the ODE steps'
        return Greedy({"mode": "eval"}, meaning, override)
    kwargs = {
        "do_sample": False,
        "temperature": float(temperature) if temperature is not None and float(temperature) > 0 else 1.0,
        "top_k": int(sampling.get("top_k", 0) or 0),
        "top_p": float(sampling.get("top_p", 1.0) or 1.0),
        "max_new_tokens": sampling.get("max_new_tokens"),
    }
    return Greedy(kwargs, "do_sample=False: argmax over each action token (temperature unused)", override)


def import_plugins(names: list[str], spec: str) -> None:
    """Import modules that register custom model types with ``rlinf.models.register_model``."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise PolicyError(
                f"policy spec {spec!r}: plugin module {name!r} cannot be imported ({exc}); it must be importable "
                "here (installed, or on PYTHONPATH) and call rlinf.models.register_model"
            ) from exc


def build_model(config: RlinfConfig, spec: str) -> Any:
    """``rlinf.models.get_model`` on the config's model section; failures name the config and rlinf's error."""
    try:
        from omegaconf import OmegaConf
        from rlinf.models import _MODEL_REGISTRY, get_model
    except ImportError as exc:
        raise PolicyError(f"policy spec {spec!r}: cannot import rlinf ({exc}); {INSTALL_HINT}") from exc
    cfg = {"precision": "fp32", "is_lora": False, **config.model}
    # get_model would move the model to RLinf's accelerator (cuda:0 on a GPU node); the policy places it itself.
    cfg["load_to_device"] = False
    if config.model_type not in _MODEL_REGISTRY:
        valid = ", ".join(sorted(_MODEL_REGISTRY))
        raise PolicyError(
            f"rlinf config {config.path}: model_type {config.model_type!r} is not registered in rlinf "
            f"{rlinf_version()} (registered: {valid}); a custom type needs its module in the spec's plugins= option"
        )
    try:
        model = get_model(OmegaConf.create(cfg))
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        hint = MODEL_CODE_HINTS.get(config.model_type) or PACKAGE_HINTS.get(
            top, f"install the package that provides {exc.name!r}"
        )
        raise PolicyError(
            f"rlinf config {config.path}: model_type {config.model_type!r} needs the Python package {top!r}, "
            f"which is not installed: {hint}"
        ) from exc
    except Exception as exc:  # anything rlinf raises while building: the config is wrong for this type
        raise PolicyError(
            f"rlinf config {config.path}: rlinf could not build model_type {config.model_type!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if model is None:
        raise PolicyError(f"rlinf config {config.path}: rlinf's get_model returned nothing for {config.model_type!r}")
    return model


def load_weights(model: Any, path: Path) -> None:
    """Load a ``full_weights.pt`` state dict strictly; missing or unexpected keys name the file."""
    import torch

    if not path.is_file():
        raise CheckpointError(
            f"weights file {path} does not exist; pass a checkpoint whose actor/model_state_dict/full_weights.pt "
            "exists (--checkpoint) or weights=PATH in the policy spec"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # RuntimeError, UnpicklingError, EOFError for truncated or foreign files
        raise CheckpointError(
            f"weights file {path} is unreadable ({type(exc).__name__}: {exc}); is it complete (still being "
            "written?) and a torch state dict?"
        ) from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"weights file {path} holds a {type(state).__name__}, not a state dict")
    expected = set(model.state_dict())
    missing = sorted(expected - set(state))
    unexpected = sorted(set(state) - expected)
    if missing or unexpected:
        raise CheckpointError(
            f"weights file {path} does not match the model built from the config: "
            f"missing keys {_listing(missing)}; unexpected keys {_listing(unexpected)}. Check that the config's "
            "model section (model_type, sizes, add_value_head, LoRA) is the one this checkpoint was trained with"
        )
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:  # shape mismatches
        raise CheckpointError(f"weights file {path} does not fit the model built from the config: {exc}") from exc


def _listing(keys: list[str], limit: int = 10) -> str:
    if not keys:
        return "none"
    shown = ", ".join(keys[:limit])
    return f"{shown} (+{len(keys) - limit} more)" if len(keys) > limit else shown
