"""Ctrl-C during ``rlinf-bench pipeline``: the Jobs stop, the execution is marked interrupted, and the same
command run again keeps the finished runs instead of redoing them; run once more, it sends its summary once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlinf_local.budget import small_matrix_yaml
from tests.e2e.conftest import REPO, rlinf_bench

pytestmark = [pytest.mark.sim, pytest.mark.slow]
BOUND_S = 900


def test_ctrl_c_marks_the_execution_interrupted_and_a_rerun_keeps_the_finished_run(
    demo_checkpoint: Path, tmp_path: Path
) -> None:
    config = tmp_path / "two-runs.yaml"
    config.write_text(
        small_matrix_yaml(tmp_path / "scratch", max_steps=5, tasks=(0,), trials=1, runs=2, workers=1, probes=("gpu",))
    )
    out = tmp_path / "out"
    args = ["pipeline", "--checkpoint", str(demo_checkpoint), "--config", str(config), "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "MLFLOW_"))}
    exe = str(Path(sys.executable).with_name("rlinf-bench"))
    log = tmp_path / "first.log"
    # One Job at a time: run 0 finishes while run 1 is still queued or running.
    proc = subprocess.Popen(
        [exe, *args, "--max-parallel", "1"], stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=REPO, env=env
    )
    try:
        deadline = time.monotonic() + BOUND_S
        while not list((out / "results").rglob("run0.json")) and not list(out.glob("jobs/*/*r0/log.txt")):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        r0 = next(iter(out.glob("jobs/*/*-r0/log.txt")), None)
        while r0 is None or "reported success" not in r0.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
            r0 = next(iter(out.glob("jobs/*/*-r0/log.txt")), None)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, log.read_text()[-3000:]
    (state,) = json.loads((out / "state.json").read_text())["executions"]
    assert state["status"] == "INTERRUPTED"
    assert list((out / "results").rglob("run0.json"))  # the finished run is kept under DIR

    again = rlinf_bench(*args, "--json")
    assert again.returncode == 0, again.stderr[-3000:]
    (execution,) = again.json()["executions"]
    assert execution["status"] == "SUCCEEDED" and execution["runs_done"] == 2
    r0_log = next(iter(out.glob("jobs/*/*-r0/log.txt"))).read_text()
    assert "already complete; nothing to run" in r0_log  # run 0 was not redone
    assert len(again.json()["outbox"]["email"]) == 1 and len(again.json()["outbox"]["slack"]) == 1

    # The same command once more: the same verdict on the same checkpoint is not sent a second time.
    third = rlinf_bench(*args, "--json")
    assert third.returncode == 0, third.stderr[-3000:]
    (execution,) = third.json()["executions"]
    assert " was sent at " in execution["already_sent"]
    assert third.json()["outbox"] == {"email": [], "slack": []}
    assert "not sent again" in third.stderr
    assert len(list((out / "outbox" / "email").glob("*.txt"))) == 1
    assert len(list((out / "outbox" / "slack").glob("*.json"))) == 1
