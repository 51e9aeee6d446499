"""Fixtures for policy tests: hand-built observation batches and demo checkpoints (no simulator)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from tests.policy_fixtures import make_obs


@pytest.fixture
def demo_ckpt(tmp_path: Path) -> Path:
    """Root of a freshly written demo checkpoint (seed 0)."""
    return Path(write_demo_checkpoint(tmp_path / "logs", seed=0).uri)


@pytest.fixture
def obs_factory() -> Any:
    """``make_obs(batch, cameras=(), resolution=32, seed=0)``."""
    return make_obs
