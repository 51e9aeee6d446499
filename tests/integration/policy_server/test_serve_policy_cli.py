"""`rlinf-bench serve-policy` as a user runs it: a separate process serving a checkpoint."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.policies.factory import load_policy
from eval_runner.policies.remote import ServerPolicy


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_given_cli_serving_demo_checkpoint_then_client_gets_the_checkpoints_actions(
    demo_ckpt: Path, obs_factory: Any
) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "rlinf_cli.main", "serve-policy", "--policy", "builtin:demo"]
    proc = subprocess.Popen(
        [*cmd, "--checkpoint", str(demo_ckpt), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # The server needs a few seconds to import torch: the client's backoff covers that.
        client = ServerPolicy(f"ws://127.0.0.1:{port}", retries=40, backoff_s=0.1, max_backoff_s=0.5)
        obs = obs_factory(4)
        np.testing.assert_array_equal(client.act(obs), load_policy("builtin:demo", demo_ckpt).act(obs))
        assert client.describe()["server"]["name"] == "builtin:demo"
        client.close()
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert f"serving builtin:demo at ws://127.0.0.1:{port}" in output
    assert proc.returncode == 0 and "policy server stopped" in output  # SIGTERM is a clean stop


def test_given_missing_checkpoint_then_cli_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "global_step_7"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlinf_cli.main",
            "serve-policy",
            "--policy",
            "builtin:demo",
            "--checkpoint",
            str(missing),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert f"checkpoint {missing} does not exist" in result.stderr


SERVE_POLICY = [sys.executable, "-m", "rlinf_cli.main", "serve-policy"]

# A policy whose loading starts a thread of its own, as CUDA and torch.compile's worker pool do.
THREADED_POLICY = """
import os, threading, time
from pathlib import Path
from eval_runner.policies.factory import load_policy

def wait():
    Path(os.environ["LOADER_THREAD_FILE"]).write_text(str(threading.get_native_id()))
    time.sleep(3600)

def make(checkpoint_dir=None):
    threading.Thread(target=wait, daemon=True).start()
    return load_policy("builtin:zero", None)
"""


def test_given_cpus_then_every_server_thread_runs_only_there_even_those_started_while_loading(tmp_path: Path) -> None:
    import os

    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("needs two cores: on one, every thread is trivially pinned")
    (tmp_path / "threaded_policy.py").write_text(THREADED_POLICY)
    port, core = free_port(), cores[-1]
    spec = "python:threaded_policy:make"
    proc = subprocess.Popen(
        [*SERVE_POLICY, "--policy", spec, "--port", str(port), "--cpus", str(core)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
            "LOADER_THREAD_FILE": str(tmp_path / "loader_thread"),
        },
    )
    try:
        client = ServerPolicy(f"ws://127.0.0.1:{port}", retries=60, backoff_s=0.1, max_backoff_s=0.5)
        assert client.describe()["server_batching"]["cpus"] == [core]
        client.close()
        tasks = Path(f"/proc/{proc.pid}/task")
        allowed = {int(task.name): _allowed_cpus(task / "status") for task in tasks.iterdir()}
        allowed = {tid: cpus for tid, cpus in allowed.items() if cpus is not None}
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert int((tmp_path / "loader_thread").read_text()) in allowed, (allowed, output)
    assert all(cpus == {core} for cpus in allowed.values()), allowed


def test_given_cpus_that_do_not_exist_then_it_exits_naming_them_before_loading_anything(tmp_path: Path) -> None:
    missing = tmp_path / "global_step_7"  # would fail the load, had the cores not been checked first
    result = subprocess.run(
        [*SERVE_POLICY, "--policy", "builtin:demo", "--checkpoint", str(missing), "--cpus", "0,4096"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "--cpus '0,4096': cores [4096] are not available here" in result.stderr
    assert "does not exist" not in result.stderr


def _allowed_cpus(status: Path) -> set[int] | None:
    """A thread's allowed cores from /proc; ``None`` when it ended meanwhile (short-lived helper threads)."""
    try:
        text = status.read_text()
    except FileNotFoundError:
        return None
    line = next(x for x in text.splitlines() if x.startswith("Cpus_allowed_list:"))
    cpus: set[int] = set()
    for part in line.split(":", 1)[1].strip().split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus
