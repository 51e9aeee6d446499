"""The stand-in policy's child-process checks (``stand_in_checks.py``), run once for every test that reads them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def stand_in_checks(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Any]]:
    """What one check of ``tests/unit/bench/stand_in_checks.py`` saw; the test fails with its traceback if it raised.

    Every check runs in one child process, started by the first test that asks for one."""
    out = tmp_path_factory.mktemp("stand-in-checks") / "checks.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tests.unit.bench.stand_in_checks", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), proc.stderr[-3000:]
    results: dict[str, dict[str, Any]] = json.loads(out.read_text())

    def check(name: str) -> dict[str, Any]:
        got = results[name]
        assert "error" not in got, got["error"]
        return got

    return check
