"""``rlinf-bench watch``: every checkpoint that completes under a log root is evaluated once.

GIVEN a watcher on a log root holding a half-written checkpoint, WHEN a complete checkpoint is written
after it started, THEN that one is evaluated and the half-written one is left alone until it completes;
a restarted watcher evaluates neither again.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import REPO, copy_checkpoint

pytestmark = [pytest.mark.sim, pytest.mark.slow]
BOUND_S = 900  # a bound for a hung watcher, not a speed assertion


def start_watch(root: Path, out: Path, config: Path, log: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "MLFLOW_"))}
    cmd = [str(Path(sys.executable).with_name("rlinf-bench")), "watch", str(root), "--out", str(out)]
    cmd += ["--config", str(config), "--quiet-period", "2", "--interval", "1", "--json", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log.open("w"), text=True, cwd=REPO, env=env)


def wait_for(what: str, check: Any, proc: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + BOUND_S
    while not check():
        if proc.poll() is not None:
            raise AssertionError(f"watch exited ({proc.returncode}) before {what}: {log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {BOUND_S} s: {log.read_text()[-3000:]}")
        time.sleep(1)


def executions(out: Path) -> list[dict[str, Any]]:
    path = out / "state.json"
    return list(json.loads(path.read_text())["executions"]) if path.exists() else []


def step_status(out: Path) -> dict[int, str]:
    return {e["checkpoint"]["global_step"]: e["status"] for e in executions(out)}


def test_watch_evaluates_a_new_checkpoint_leaves_a_half_written_one_and_never_twice(
    demo_checkpoint: Path, tiny_config: Path, tmp_path: Path
) -> None:
    root, out, log = tmp_path / "runs", tmp_path / "out", tmp_path / "watch.log"
    half = copy_checkpoint(demo_checkpoint, root, step=100, skip_last=True)  # written before the watcher
    proc = start_watch(root, out, tiny_config, log, "--max-checkpoints", "2")
    try:
        wait_for("watching", lambda: "watching" in log.read_text(), proc, log)
        copy_checkpoint(demo_checkpoint, root, step=200)  # complete, written after it started
        wait_for("step 200 evaluated", lambda: step_status(out).get(200) == "SUCCEEDED", proc, log)
        assert 100 not in step_status(out)  # no full_weights.pt yet: left alone
        last = "actor/model_state_dict/full_weights.pt"
        shutil.copy(demo_checkpoint / last, half / last)  # now it completes
        stdout, _ = proc.communicate(timeout=BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, log.read_text()[-3000:]
    doc = json.loads(stdout)
    assert [e["checkpoint"]["global_step"] for e in doc["executions"]] == [200, 100]
    assert all(e["status"] == "SUCCEEDED" for e in doc["executions"])
    assert len(doc["outbox"]["email"]) == 2 and len(doc["outbox"]["slack"]) == 2

    # A restart evaluates nothing twice; Ctrl-C leaves the state file whole.
    again = start_watch(root, out, tiny_config, tmp_path / "again.log")
    try:
        wait_for("watching", lambda: "watching" in (tmp_path / "again.log").read_text(), again, tmp_path / "again.log")
        time.sleep(5)  # several scans of the root
        again.send_signal(signal.SIGINT)
        again.communicate(timeout=BOUND_S)
    finally:
        if again.poll() is None:
            again.kill()
    assert again.returncode == 130
    assert sorted(step_status(out).items()) == [(100, "SUCCEEDED"), (200, "SUCCEEDED")]
