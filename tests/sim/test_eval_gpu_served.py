"""``bench/eval_gpu.py``'s served part on the CPU: the path every GPU suite figure comes through.

The device runs this same driver with the 7B stand-in; here a one-layer stand-in serves one episode of
eight steps, so a broken driver shows up on the CPU before a lease is spent on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]


def test_given_a_small_stand_in_served_then_the_task_run_completes_and_records_the_server_and_its_commands(
    tmp_path: Path,
) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the served run reserves a core for the server and needs one more for the worker")
    out, work = tmp_path / "task.json", tmp_path / "work"
    cmd = [
        sys.executable, "bench/eval_gpu.py", "--parts", "task", "--workers", "1", "--trials", "1",
        "--max-steps", "8", "--resolution", "32", "--policy-options", "layers=1&hidden=64&device=cpu",
        "--server-cores", "1", "--inflight", "2", "--port", "8791", "--out", str(out), "--work", str(work),
    ]  # fmt: skip
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    task = json.loads(out.read_text())["task_7b"]
    assert task["status"] == "complete" and task["episodes"] == 1 and task["exit"] == 0
    assert task["server_recompiles"] == 0
    assert task["server"]["policy_calls"] >= 1 and len(task["server"]["model_busy_by_tenth"]) == 10
    assert task["command"].startswith("rlinf-bench evaluate --suite libero_spatial --tasks 0 --trials 1")
    assert "--cpus" in task["server_command"] and len(task["server_cpus"]) == 1
    assert (work / "task_7b_server.log").exists()
