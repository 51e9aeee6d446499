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
    """``$CHROMIUM`` when it is an executable, else the first Chromium on PATH."""
    explicit = os.environ.get("CHROMIUM", "")
    if explicit and os.access(explicit, os.X_OK) and Path(explicit).is_file():
        return explicit
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium binary; skips (or, in CI, fails) when there is none."""
    found = find_chromium()
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests but finds no Chromium: {ENABLE}")
    pytest.skip(f"no Chromium on this machine: {ENABLE} to run the browser tests")
