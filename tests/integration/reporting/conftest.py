"""Chromium for the browser tests: one already here, or a skip that says how to get one (never in CI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

#: Names a Chromium goes by on Debian/Ubuntu and elsewhere, in the order tried.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ENABLE = "run `sudo make browser` (apt-get install chromium) or set CHROMIUM=/path/to/chromium"


def find_chromium() -> str | None:
    """``$CHROMIUM`` when it is an executable, else the first Chromium on PATH, else the one `make browser`
    unpacked without root into ``$CHROMIUM_DIR`` (default ``~/.cache/rlinf-bench/chromium``)."""
    unpacked_dir = os.environ.get("CHROMIUM_DIR") or str(Path.home() / ".cache" / "rlinf-bench" / "chromium")
    unpacked = Path(unpacked_dir) / "usr" / "lib" / "chromium" / "chromium"
    for candidate in (os.environ.get("CHROMIUM", ""), *(shutil.which(n) or "" for n in CHROMIUM_NAMES), str(unpacked)):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium binary; skips (or, in CI, fails) when there is none."""
    found = find_chromium()
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests but finds no Chromium: {ENABLE}")
    pytest.skip(f"no Chromium on this machine: {ENABLE} to run the browser tests")
