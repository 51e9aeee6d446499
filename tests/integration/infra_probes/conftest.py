"""Fixtures for probe tests: a scratch directory on a real disk (never tmpfs: O_DIRECT must mean something)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra_probes.environment import filesystem_of
from infra_probes.storage import MEMORY_FS

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def disk_dir(tmp_path: Path) -> Iterator[Path]:
    """pytest's tmp_path when it is on a disk, else a scratch folder inside the repository's disk."""
    if filesystem_of(tmp_path).get("fs_type") not in MEMORY_FS:
        yield tmp_path
        return
    scratch = Path(tempfile.mkdtemp(prefix=".probe-test-", dir=REPO))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
