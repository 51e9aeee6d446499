"""A reader that stops early (``rlinf-bench compare --json | head``) ends the command quietly: no traceback and
no "Exception ignored" on stderr, whatever the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CLI = str(Path(sys.executable).with_name("rlinf-bench"))


def run_into_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """``rlinf-bench ARGS`` with stdout a pipe whose reader is already gone (what ``| head`` leaves behind)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([CLI, *args], stdout=write, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=120)
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["compare", "--help"], ["schemas", "--out", "SCRATCH"], ["baselines", "--json"]],
    ids=["help", "compare help", "schemas", "baselines json"],
)
def test_given_a_closed_pipe_then_the_command_ends_without_a_traceback(argv: list[str], tmp_path: Path) -> None:
    proc = run_into_closed_pipe(*[str(tmp_path) if a == "SCRATCH" else a for a in argv])

    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert "BrokenPipe" not in proc.stderr
    assert proc.returncode in (0, 1)
