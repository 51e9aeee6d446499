"""Checkpoints that carry ``builtin:expert`` settings instead of learned weights (the demo's two steps).

A scripted expert has no weights, but the demo needs two checkpoints of one experiment that behave
differently, in RLinf's real layout, found and compared like any other. Such a checkpoint holds the
expert's settings in ``actor/model_state_dict/expert_settings.json`` (beside ``full_weights.pt``, so an
S3 download of the weights folder brings it along, see :mod:`eval_runner.checkpoint_fetch`), and
``builtin:expert?settings=checkpoint`` reads them from the checkpoint under evaluation.

The file is input from a bucket: it is parsed by a strict model (unknown fields refused, values
bounded as the spec options are) and never executed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_bench.checkpoints.named_policies import EXPERT_SETTINGS_FILE
from rlinf_bench.errors import CheckpointError

#: Where the settings live, relative to the checkpoint root (``…/global_step_<N>``).
SETTINGS_FILE = EXPERT_SETTINGS_FILE
#: What every such checkpoint says about itself: no learned parameters inside.
Kind = Literal["scripted expert with simulator access: settings only, not a learned policy"]
KIND: Kind = "scripted expert with simulator access: settings only, not a learned policy"


class ExpertSettings(BaseModel):
    """The ``builtin:expert`` options a checkpoint carries (the same bounds as the spec's options)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind = KIND
    noise: float = Field(default=0.0, ge=0.0, le=5.0, description="Gaussian action noise (std, action units)")
    hesitate: float = Field(default=0.0, ge=0.0, lt=1.0, description="Probability that a step is wasted")
    seed: int = Field(default=0, description="Seeds every episode's noise with (seed, task, initial state)")


def settings_path(checkpoint_dir: Path) -> Path:
    """The settings file of a checkpoint root, or the file itself when given directly."""
    return checkpoint_dir if checkpoint_dir.is_file() else checkpoint_dir / SETTINGS_FILE


def read_settings(checkpoint_dir: Path) -> tuple[ExpertSettings, str]:
    """The settings a checkpoint carries and the sha256 of their file; CheckpointError names the file."""
    path = settings_path(checkpoint_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(
            f"checkpoint {checkpoint_dir} has no {SETTINGS_FILE}: builtin:expert?settings=checkpoint reads the "
            "expert's settings from checkpoints written by `python -m eval_runner.demo_checkpoint --expert-noise N`; "
            "for any other checkpoint give the settings in the spec (builtin:expert?noise=0.5)"
        ) from None
    except OSError as exc:
        raise CheckpointError(f"cannot read {path}: {exc}") from exc
    try:
        settings = ExpertSettings.model_validate_json(raw)
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(file)'}: {e['msg']}" for e in exc.errors())
        raise CheckpointError(f"{path} is not valid expert settings ({fields}); rewrite it or the checkpoint") from exc
    return settings, hashlib.sha256(raw).hexdigest()


def settings_json(settings: ExpertSettings) -> str:
    """The file's text (what :func:`read_settings` reads back)."""
    return settings.model_dump_json(indent=2) + "\n"
