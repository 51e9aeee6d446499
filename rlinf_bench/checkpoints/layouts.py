"""The files each RLinf checkpoint layout consists of (REFERENCE.md section 3), and the one rule that tells
the layout of a checkpoint from the names of its files.

Paths are relative to the checkpoint root ``.../checkpoints/global_step_<N>/``, '/'-separated; patterns are
globs matched segment by segment (:func:`matches`), so ``*`` never crosses a ``/``. The intake (completeness),
the eval Job (which files to download) and the local commands all read these tables.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
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
    #: what a policy loads: the weights and the files beside them (never the DCP/optimizer shards, which are
    #: several times larger and only needed to resume training)
    needed: tuple[str, ...]


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
        needed=("actor/model_state_dict/*",),
    ),
    CheckpointLayout.V01: LayoutSpec(
        CheckpointLayout.V01,
        required=("actor/.metadata", "actor/*.distcp", "actor/model/*.safetensors"),
        last_file="actor/model/model.safetensors",
        weights=("actor/model/model.safetensors", "actor/model/*.safetensors"),
        needed=("actor/model/*",),
    ),
    CheckpointLayout.LEGACY_PT: LayoutSpec(
        CheckpointLayout.LEGACY_PT,
        required=("actor/model.pt",),
        last_file="actor/optim.pt",
        weights=("actor/model.pt",),
        needed=("actor/model.pt",),
    ),
    CheckpointLayout.MEGATRON: LayoutSpec(
        CheckpointLayout.MEGATRON,
        required=("actor/latest_checkpointed_iteration.txt", "actor/iter_*/mp_rank_*/*"),
        last_file="actor/latest_checkpointed_iteration.txt",
        weights=("actor/iter_*/mp_rank_00/model_optim_rng.pt",),
        needed=("actor/latest_checkpointed_iteration.txt", "actor/iter_*/mp_rank_*/model_optim_rng.pt"),
    ),
}


def matches(relative: str, pattern: str) -> bool:
    """Glob match segment by segment, so '*' never crosses a '/' (unlike fnmatch on the whole path)."""
    parts, pats = relative.split("/"), pattern.split("/")
    return len(parts) == len(pats) and all(fnmatchcase(p, q) for p, q in zip(parts, pats, strict=True))


def layout_of_names(names: Iterable[str]) -> CheckpointLayout | None:
    """The layout of a checkpoint from the names of its files, relative to its root (an S3 listing or a
    local walk): the one rule, so S3 and local checkpoints are judged alike. None when no layout's files
    are present (yet)."""
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


def weights_name(names: Iterable[str], layout: CheckpointLayout) -> str | None:
    """The weights file among ``names`` for ``layout`` (its patterns in order, then the first name), or None."""
    ordered = sorted(names)
    for pattern in LAYOUTS[layout].weights:
        found = next((n for n in ordered if matches(n, pattern)), None)
        if found is not None:
            return found
    return None


def needed_names(names: Iterable[str], layout: CheckpointLayout) -> list[str]:
    """The files a policy loads from a checkpoint of ``layout`` (:attr:`LayoutSpec.needed`), sorted."""
    return sorted(n for n in names if any(matches(n, p) for p in LAYOUTS[layout].needed))


def local_names(root: Path) -> list[str]:
    """Every file below a local checkpoint root, as '/'-separated names relative to it."""
    return sorted((Path(d) / f).relative_to(root).as_posix() for d, _dirs, files in os.walk(root) for f in files)


def detect_layout(root: Path) -> CheckpointLayout:
    """The layout of a local checkpoint directory (:func:`layout_of_names` on its files)."""
    actor = root / "actor"
    if not actor.is_dir():
        raise CheckpointError(
            f"{root} has no actor/ directory: point --checkpoint at a global_step_<N> directory of an "
            "RLinf run (…/checkpoints/global_step_<N>)"
        )
    layout = layout_of_names(local_names(root))
    if layout is None:
        raise CheckpointError(f"{root}: unrecognised RLinf checkpoint layout (files: {sorted(os.listdir(actor))})")
    return layout


def missing_weights(where: str, layout: CheckpointLayout) -> CheckpointError:
    """The error for a checkpoint of ``layout`` that holds no weights file (yet)."""
    spec = LAYOUTS[layout]
    return CheckpointError(
        f"{where}: no weights file for layout {layout.value} (looked for {', '.join(spec.weights)}); "
        "the checkpoint is incomplete or was not written by RLinf"
    )


def find_weights(root: Path, layout: CheckpointLayout | None = None) -> Path:
    """The weights file of a local checkpoint, or a CheckpointError naming what is missing."""
    chosen = layout or detect_layout(root)
    found = weights_name(local_names(root), chosen)
    if found is None:
        raise missing_weights(str(root), chosen)
    return root / found


def layout_of_last_file(relative: str) -> CheckpointLayout | None:
    """The layout whose last-written file is ``relative`` (a path under the checkpoint root), if any.

    Only the last file's arrival can make a checkpoint complete, so events for other files are cheap no-ops.
    """
    for spec in LAYOUTS.values():
        if relative == spec.last_file:
            return spec.layout
    return None
