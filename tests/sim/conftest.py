"""Fixtures for tests that run the real LIBERO simulator (CPU, Mesa EGL)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def libero_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One LIBERO config/cache folder for the whole session (configuring is idempotent)."""
    return tmp_path_factory.mktemp("libero-cache")
