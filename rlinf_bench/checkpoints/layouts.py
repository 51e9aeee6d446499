"""The files each RLinf checkpoint layout consists of (REFERENCE.md section 3).

Paths are relative to the checkpoint root ``.../checkpoints/global_step_<N>/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import CheckpointError


@dataclass(frozen=True)
class LayoutSpec:
    layout: CheckpointLayout
    #: glob patterns (relative to the checkpoint root) that must each match at least one file
    required: tuple[str, ...]
    #: the file written last: its arrival is the earliest sign the checkpoint may be complete
    last_file: str
    #: where the policy weights are read from (first match wins)
    weights: tuple[str, ...]


LAYOUTS: dict[CheckpointLayout, LayoutSpec] = {
    CheckpointLayout.FSDP_DCP: LayoutSpec(
        CheckpointLayout.FSDP_DCP,
        required=(
            "actor/dcp_checkpoint/.metadata",
            "actor/dcp_checkpoint/*.distcp",
            "actor/model_state_dict/full_weights.pt",
        ),
        last_file="actor/model_state_dict/full_weights.pt",
        weights=("actor/model_state_dict/full_weights.pt",),
    ),
    CheckpointLayout.V01: LayoutSpec(
        CheckpointLayout.V01,
        required=("actor/.metadata", "actor/*.distcp", "actor/model/*.safetensors"),
        last_file="actor/model/model.safetensors",
        weights=("actor/model/model.safetensors", "actor/model/*.safetensors"),
    ),
    CheckpointLayout.LEGACY_PT: LayoutSpec(
        CheckpointLayout.LEGACY_PT,
        required=("actor/model.pt",),
        last_file="actor/optim.pt",
        weights=("actor/model.pt",),
    ),
    CheckpointLayout.MEGATRON: LayoutSpec(
        CheckpointLayout.MEGATRON,
        required=("actor/latest_checkpointed_iteration.txt", "actor/iter_*/mp_rank_*/*"),
        last_file="actor/latest_checkpointed_iteration.txt",
        weights=("actor/iter_*/mp_rank_00/model_optim_rng.pt",),
    ),
}


def detect_layout(root: Path) -> CheckpointLayout:
    """Guess the layout of a local checkpoint directory from the files present."""
    actor = root / "actor"
    if not actor.is_dir():
        raise CheckpointError(
            f"{root} has no actor/ directory: point --checkpoint at a global_step_<N> directory of an "
            "RLinf run (…/checkpoints/global_step_<N>)"
        )
    if (actor / "model_state_dict").is_dir() or (actor / "dcp_checkpoint").is_dir():
        return CheckpointLayout.FSDP_DCP
    if (actor / "latest_checkpointed_iteration.txt").exists():
        return CheckpointLayout.MEGATRON
    if (actor / "model").is_dir():
        return CheckpointLayout.V01
    if (actor / "model.pt").exists():
        return CheckpointLayout.LEGACY_PT
    raise CheckpointError(f"{root}: unrecognised RLinf checkpoint layout (files: {sorted(os.listdir(actor))})")


def find_weights(root: Path, layout: CheckpointLayout | None = None) -> Path:
    """The weights file of a local checkpoint, or a CheckpointError naming what is missing."""
    spec = LAYOUTS[layout or detect_layout(root)]
    for pattern in spec.weights:
        matches = sorted(root.glob(pattern))
        if matches:
            return matches[0]
    raise CheckpointError(
        f"{root}: no weights file for layout {spec.layout.value} (looked for {', '.join(spec.weights)}); "
        "the checkpoint is incomplete or was not written by RLinf"
    )


def layout_of_names(names: Iterable[str]) -> CheckpointLayout | None:
    """Guess the layout from object names relative to the checkpoint root (an S3 listing or a local walk).

    The same precedence as :func:`detect_layout`, on names instead of a directory, so that S3 and local
    checkpoints are judged by one rule. None when no layout's files are present (yet).
    """
    listed = set(names)
    if any(n.startswith(("actor/model_state_dict/", "actor/dcp_checkpoint/")) for n in listed):
        return CheckpointLayout.FSDP_DCP
    if "actor/latest_checkpointed_iteration.txt" in listed or any(n.startswith("actor/iter_") for n in listed):
        return CheckpointLayout.MEGATRON
    if any(n.startswith("actor/model/") for n in listed):
        return CheckpointLayout.V01
    if "actor/model.pt" in listed or "actor/optim.pt" in listed:
        return CheckpointLayout.LEGACY_PT
    return None


def layout_of_last_file(relative: str) -> CheckpointLayout | None:
    """The layout whose last-written file is ``relative`` (a path under the checkpoint root), if any.

    Only the last file's arrival can make a checkpoint complete, so events for other files are cheap no-ops.
    """
    for spec in LAYOUTS.values():
        if relative == spec.last_file:
            return spec.layout
    return None
