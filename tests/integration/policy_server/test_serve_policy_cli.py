"""`rlinf-bench serve-policy` as a user runs it: a separate process serving a checkpoint."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

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
