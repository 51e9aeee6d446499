"""A complete local RLinf checkpoint (FSDP layout, zero-filled) for the commands that check completeness."""

from __future__ import annotations

from pathlib import Path

from tests.synthetic_checkpoints import fsdp_objects


def write_local(root: Path, step: int) -> Path:
    """`<root>/exp/checkpoints/global_step_<step>` with every file of the layout."""
    ckpt = root / "exp" / "checkpoints" / f"global_step_{step}"
    for relative, size in fsdp_objects(4, metadata_at="first", markers=False):
        path = ckpt / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\0" * size)
    return ckpt
