"""The GPU benchmark's 7B-class policy, shrunk to run on a CPU: its chunks, either way they are served.

The policy runs in a child process, as it does behind ``rlinf-bench serve-policy``: transformers pulls
in triton, whose bundled LLVM crashes a process that already loaded Mesa's (the simulator tests do).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="pip install 'rlinf-bench[gpu-bench]'")

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import json, sys
import numpy as np
from bench.llama_policy import make_policy
from tests.policy_fixtures import make_obs

tiny = {"layers": 1, "hidden": 64, "intermediate": 128, "heads": 2, "resolution": 32, "device": "cpu"}
obs = make_obs(3, cameras=("agentview", "robot0_eye_in_hand"), resolution=32, seed=1)
obs["episode_id"] = [f"t0-s{i}-a0" for i in range(3)]
runner = make_policy(**tiny)
chunks = runner.act(obs)
per_call = make_policy(**tiny, chunks="policy")  # same seed: the same random weights
steps = np.stack([per_call.act(obs) for _ in range(8)], axis=1)
try:
    make_policy(**tiny, chunks="server")
    refused = ""
except ValueError as exc:
    refused = str(exc)
json.dump({
    "shape": list(chunks.shape),
    "forwards": [runner.forwards, per_call.forwards],
    "max_diff": float(np.abs(steps - chunks).max()),
    "grippers": sorted({float(g) for g in np.unique(chunks[..., -1])}),
    "max_arm": float(np.abs(chunks[..., :6]).max()),
    "executed_by": runner.describe()["chunks_executed_by"],
    "refused": refused,
}, sys.stdout)
"""


def test_given_runner_chunks_then_each_row_gets_its_8_actions_and_the_policy_mode_hands_out_the_same_ones() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)

    assert got["shape"] == [3, 8, 7] and got["executed_by"] == "runner"
    # one forward each: the runner's chunk, and the chunk the per-call mode then hands out over 8 calls
    assert got["forwards"] == [1, 1]
    assert got["max_diff"] <= 1e-6
    assert set(got["grippers"]) <= {-1.0, 1.0} and got["max_arm"] <= 0.1
    assert "chunks='server'" in got["refused"]
