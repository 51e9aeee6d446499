"""The lean Llama backbone computes transformers' LlamaModel's function, so the stand-in's work is unchanged.

The stand-in's checks run in one child process (``stand_in_checks.py``, through the ``stand_in_checks``
fixture): transformers pulls in triton, whose bundled LLVM crashes a process that already loaded Mesa's.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="pip install 'rlinf-bench[gpu-bench]'")

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("seed", [0, 1])  # stand_in_checks.HF_SEEDS
def test_given_transformers_weights_then_the_lean_backbone_gives_llamas_hidden_states(
    seed: int, stand_in_checks: Callable[[str], dict[str, Any]]
) -> None:
    got = stand_in_checks(f"hf_equivalence_seed{seed}")

    # float64 weights and inputs on both sides; transformers' RMSNorm and rotary tables still compute in
    # float32, so the two agree to float32 rounding (~5e-8). A wrong rotation, mask or residual gives ~1.
    assert all(err < 1e-6 for err in got["errors"].values()), got["errors"]
    assert got["prefix_kept"]


def test_given_the_lean_backbone_then_the_policy_gives_finite_chunks_and_refuses_an_unknown_backbone(
    stand_in_checks: Callable[[str], dict[str, Any]],
) -> None:
    got = stand_in_checks("lean_policy")

    assert got["shape"] == [3, 8, 7] and got["finite"]
    assert "backbone='vllm'" in got["refused"]


def test_given_an_out_inside_the_published_results_then_forward_speed_refuses_before_building_a_model() -> None:
    proc = subprocess.run(
        [sys.executable, "bench/forward_speed.py", "--out", "bench/results/forward.json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0 and "--update-results" in proc.stderr
    assert not (ROOT / "bench" / "results" / "forward.json").exists()


def test_the_stand_ins_flops_per_row_are_those_the_published_tflops_figures_assume() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.forward_speed import forward_flops_per_row

    # 601 tokens (2 x 256 patches, proprio, 32 prompt, 56 action queries) through Llama-2-7B's 32 layers
    assert round(forward_flops_per_row(601) / 1e12, 3) == 7.974
    assert forward_flops_per_row(1202) > 2 * forward_flops_per_row(601)  # attention grows with the square


def test_given_the_compiled_backbone_then_it_computes_the_lean_backbones_function(
    stand_in_checks: Callable[[str], dict[str, Any]],
) -> None:
    # the same weights (same seed), bf16 both ways: Inductor's fused kernels keep float32 between the
    # operations eager rounds to bf16, so the two differ by bf16 rounding (~1e-2), not by a wrong network (~1)
    got = stand_in_checks("compiled")

    assert got["config"] == "LeanLlama (bench/lean_llama.py) through torch.compile"
    assert got["3"] < 3e-2 and got["1"] < 3e-2, got
    # built once for batch 1 and once for every other size, before serving; serving compiles nothing more
    assert got["graphs_built"] == 2 and got["graphs_after_serving"] == 2, got


def test_given_a_device_named_without_the_inputs_index_then_serving_still_compiles_nothing(
    stand_in_checks: Callable[[str], dict[str, Any]],
) -> None:
    # On the H200, device="cuda" keyed the prebuilt rotary tables under "cuda" while the inputs said "cuda:0":
    # the forward added a table, and the first multi-row request after serving compiled again (~20 s).
    got = stand_in_checks("indexed_device")

    assert got == {"graphs_built": 2, "graphs_after_serving": 2}, got


def test_given_no_compiler_then_the_compiled_backbone_fails_at_build_naming_the_uncompiled_one(
    stand_in_checks: Callable[[str], dict[str, Any]],
) -> None:
    message = stand_in_checks("no_compiler")["message"]

    assert "backbone=lean-compiled could not be compiled here" in message, message
    assert "No working C++ compiler" in message and "Use backbone=lean" in message


def test_given_a_server_on_reserved_cores_then_the_compiled_backbone_never_compiles_while_serving() -> None:
    import os
    import socket

    from eval_runner.policies.remote import ServerPolicy
    from tests.policy_fixtures import make_obs

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    options = "layers=1&hidden=64&intermediate=128&heads=2&resolution=32&device=cpu&backbone=lean-compiled"
    core = sorted(os.sched_getaffinity(0))[-1]
    spec = f"python:bench.llama_policy:make_policy?{options}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlinf_cli.main",
            "serve-policy",
            "--port",
            str(port),
            "--cpus",
            str(core),
            "--policy",
            spec,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "TORCH_LOGS": "recompiles", "PYTHONPATH": str(ROOT)},
    )
    try:
        client = ServerPolicy(f"ws://127.0.0.1:{port}", retries=120, backoff_s=0.5, max_backoff_s=1.0)
        for rows in (3, 5, 1):  # sizes the build did not compile for, from the server's model thread
            obs = make_obs(rows, cameras=("agentview", "robot0_eye_in_hand"), resolution=32, seed=rows)
            assert client.act(obs).shape == (rows, 8, 7)
        client.close()
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=60)
    serving = output.index("serving python:bench.llama_policy")
    # Dynamo logs every recompile; the build's own (batch 1 after batch 2) comes before "serving". Pinning
    # the server's threads after the build must not change what the graphs guard on (the thread count).
    assert "Recompiling" not in output[serving:], output[serving:][-3000:]
