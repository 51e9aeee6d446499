"""`rlinf-bench serve-policy --policy rlinf:...` in its own process: a CPU eval client gets the RLinf model's actions."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rlinf", reason="rlinf lives in .venv-rlinf (its antlr4 pin breaks moto here): make test-rlinf")

from eval_runner.policies.factory import load_policy
from eval_runner.policies.remote import ServerPolicy
from tests import rlinf_fixtures as F
from tests.policy_fixtures import make_obs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_given_an_rlinf_checkpoint_served_then_the_client_gets_its_chunked_greedy_actions(tmp_path: Path) -> None:
    model = F.build(F.chunk_section(4), seed=7)
    step = F.write_checkpoint(tmp_path / "exp", model)
    config = F.write_run_config(tmp_path / "config.yaml", F.chunk_section(4), temperature_eval=1.6)
    spec = f"rlinf:{config}?plugins=tests.rlinf_fixtures&images=0"
    port = free_port()
    cmd = [sys.executable, "-m", "rlinf_cli.main", "serve-policy", "--policy", spec]
    proc = subprocess.Popen(
        [*cmd, "--checkpoint", str(step), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # importing rlinf takes ~10 s on two cores: the client's backoff covers it
        client = ServerPolicy(f"ws://127.0.0.1:{port}", retries=120, backoff_s=0.2, max_backoff_s=0.5)
        local = load_policy(spec, step)
        obs = make_obs(2)
        client.reset(obs["episode_id"])
        for _ in range(6):  # crosses a chunk boundary (chunk size 4)
            np.testing.assert_array_equal(client.act(obs), local.act(obs))
        served = client.describe()["server"]
        assert served["model_type"] == F.CHUNK_TYPE and served["chunk_size"] == 4
        assert served["weights_sha256"] == local.describe()["weights_sha256"]
        assert served["greedy_override"]["config_value"] == 1.6
        client.close()
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=60)
    assert f"serving {spec} at ws://127.0.0.1:{port}" in output
