"""Checks on what a user points the embedded default at: a local RLinf checkpoint directory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rlinf_bench.checkpoints.keys import MAX_STEP_DIGITS
from rlinf_bench.checkpoints.layouts import LAYOUTS, detect_layout, find_weights
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import CheckpointError

__all__ = ["LocalCheckpoint", "accepted_layouts", "local_checkpoint", "with_user_paths"]


def accepted_layouts() -> str:
    """One line per RLinf layout: its name and the files it consists of."""
    return "\n".join(
        f"  {spec.layout.value}: <log root>/<experiment>/checkpoints/global_step_<N>/ with " + ", ".join(spec.required)
        for spec in LAYOUTS.values()
    )


@dataclass(frozen=True)
class LocalCheckpoint:
    """A checkpoint directory and where it goes in the bucket (``<experiment>/checkpoints/global_step_<N>``)."""

    path: Path
    experiment: str
    global_step: int
    layout: CheckpointLayout

    @property
    def key_prefix(self) -> str:
        return f"{self.experiment}/checkpoints/global_step_{self.global_step}"

    def files(self) -> list[Path]:
        """Every file, the layout's last file last (the order RLinf and FSx write them)."""
        last = self.path / LAYOUTS[self.layout].last_file
        found = sorted(p for p in self.path.rglob("*") if p.is_file())
        return [p for p in found if p != last] + ([last] if last in found else [])


def _refuse(path: str, why: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {path}: {why}. Accepted RLinf layouts:\n{accepted_layouts()}")


def local_checkpoint(given: str) -> LocalCheckpoint:
    """The checkpoint at ``given`` (a directory or file:// URI), or a CheckpointError naming the path and layouts."""
    if given.startswith("s3://"):
        raise _refuse(
            given,
            "the embedded default evaluates local checkpoints; for one in S3 use the deployed stack "
            "(rlinf-bench trigger), or copy it here first",
        )
    path = Path(given.removeprefix("file://")).expanduser()
    if not path.exists():
        raise _refuse(given, "does not exist")
    if not path.is_dir():
        raise _refuse(given, "is a file; point at the global_step_<N> directory")
    path = path.resolve()
    try:
        layout = detect_layout(path)
        find_weights(path, layout)
    except CheckpointError as exc:
        raise _refuse(given, f"is not an RLinf checkpoint ({exc})") from exc
    step_text = path.name.removeprefix("global_step_")
    numbered = step_text.isascii() and step_text.isdigit() and len(step_text) <= MAX_STEP_DIGITS  # not global_step_²
    if not path.name.startswith("global_step_") or not numbered or path.parent.name != "checkpoints":
        raise _refuse(given, "is not at <experiment>/checkpoints/global_step_<N>, where RLinf writes checkpoints")
    return LocalCheckpoint(path=path, experiment=path.parent.parent.name, global_step=int(step_text), layout=layout)


def with_user_paths(text: str, copies: dict[str, Path]) -> str:
    """``text`` (a Job's failure) with each checkpoint's copies named by the user's folder instead.

    ``copies`` maps ``<bucket>/<experiment>/checkpoints/global_step_<N>`` to the folder it was uploaded from; the
    bucket's URI (``s3://<bucket>/…``) and a Job's download cache (``…/<bucket>/…`` under its cache folder) are
    both replaced, so an error names the folder the user gave, not one they never saw."""
    for key, folder in copies.items():
        pattern = re.compile(rf"(?:s3://|[^\s'\"(]*/){re.escape(key)}(?![0-9A-Za-z_])")
        text = pattern.sub(str(folder).replace("\\", "\\\\"), text)  # a folder's backslashes stay literal
    return text
