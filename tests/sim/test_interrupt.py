"""SIGTERM (how Kubernetes stops a pod) ends the run with status incomplete, keeping finished episodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sim.helpers import REPO

pytestmark = pytest.mark.sim


def test_given_a_running_evaluation_when_sigterm_arrives_then_it_exits_non_zero_and_keeps_finished_episodes(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "eval_runner", "--suite", "libero_spatial", "--tasks", "0", "--trials", "4"]
    cmd += ["--max-steps", "40", "--policy", "builtin:zero", "--out", str(out), "--cache-dir", str(libero_cache)]
    proc = subprocess.Popen([*cmd, "--no-progress"], cwd=REPO, env=os.environ.copy(), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and json.loads(out.read_text())["episodes"] >= 1:
                break
            time.sleep(0.5)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()

    assert proc.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr
    result = json.loads(out.read_text())
    assert result["status"] == "incomplete" and "interrupted" in result["error"]
    assert 1 <= result["episodes"] < 4
