"""The uv that the Makefile uses, for the repo's tools that install packages (uv's venvs have no pip)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def pinned_uv() -> str | None:
    """$UV (the Makefile exports it), else uv on PATH, else the Makefile's pinned copy under ~/.cache; None
    when none of them exists (then the caller falls back to pip)."""
    version = re.search(r"^UV_VERSION := (\S+)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    cached = Path.home() / ".cache" / "rlinf-bench" / f"uv-{version[1] if version else ''}" / "bin" / "uv"
    return next(
        (uv for uv in (os.environ.get("UV"), shutil.which("uv"), str(cached)) if uv and Path(uv).is_file()), None
    )
