"""The lean Llama backbone computes transformers' LlamaModel's function, so the stand-in's work is unchanged.

Runs in a child process, like ``test_llama_policy.py``: transformers pulls in triton, whose bundled LLVM
crashes a process that already loaded Mesa's.
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
import torch
from transformers import LlamaConfig, LlamaModel
from bench.lean_llama import LeanLlama, load_from_hf
from bench.llama_policy import make_policy
from tests.policy_fixtures import make_obs

torch.manual_seed(int(sys.argv[1]))
config = LlamaConfig(vocab_size=100, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
                     num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256)
config._attn_implementation = "sdpa"
hf = LlamaModel(config).double().eval()
lean = LeanLlama(vocab=100, hidden=64, intermediate=96, layers=3, heads=4).double().eval()
load_from_hf(lean, hf)
errors = {}
with torch.no_grad():
    for batch, seq in ((1, 5), (3, 37)):
        embeds = torch.randn(batch, seq, 64, dtype=torch.float64)
        ref = hf(inputs_embeds=embeds, use_cache=False).last_hidden_state
        errors[f"{batch}x{seq}"] = float((lean(embeds) - ref).norm() / ref.norm())
    # causal: the first tokens' states ignore what follows them
    embeds = torch.randn(2, 9, 64, dtype=torch.float64)
    changed = embeds.clone(); changed[:, 6:] += 1.0
    prefix_kept = bool(torch.equal(lean(embeds)[:, :6], lean(changed)[:, :6]))

tiny = {"layers": 1, "hidden": 64, "intermediate": 128, "heads": 2, "resolution": 32, "device": "cpu"}
obs = make_obs(3, cameras=("agentview", "robot0_eye_in_hand"), resolution=32, seed=1)
chunks = make_policy(**tiny, backbone="lean").act(obs)
try:
    make_policy(**tiny, backbone="vllm")
    refused = ""
except ValueError as exc:
    refused = str(exc)
json.dump({"errors": errors, "prefix_kept": prefix_kept, "shape": list(chunks.shape),
           "finite": bool(np.isfinite(chunks).all()), "refused": refused}, sys.stdout)
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_given_transformers_weights_then_the_lean_backbone_gives_llamas_hidden_states(seed: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(seed)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)

    # float64 weights and inputs on both sides; transformers' RMSNorm and rotary tables still compute in
    # float32, so the two agree to float32 rounding (~5e-8). A wrong rotation, mask or residual gives ~1.
    assert all(err < 1e-6 for err in got["errors"].values()), got["errors"]
    assert got["prefix_kept"]
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


COMPILED_CHILD = """
import json, sys
import numpy as np
from bench.llama_policy import make_policy
from tests.policy_fixtures import make_obs

tiny = {"layers": 2, "hidden": 64, "intermediate": 128, "heads": 2, "resolution": 32, "device": "cpu"}
obs = make_obs(3, cameras=("agentview", "robot0_eye_in_hand"), resolution=32, seed=2)
eager = make_policy(**tiny, backbone="lean")
compiled = make_policy(**tiny, backbone="lean-compiled")  # compiles for batches 2 and 1 while it is built
from torch._dynamo.utils import counters
graphs_built = counters["stats"]["unique_graphs"]
# served later from the server's model thread, at other batch sizes: nothing may compile mid-run
import threading
serve = threading.Thread(target=lambda: [compiled.infer(make_obs(n, cameras=("agentview", "robot0_eye_in_hand"),
                                                                 resolution=32, seed=n)) for n in (3, 7, 1, 16)])
serve.start(); serve.join()
out = {"config": compiled.describe()["backbone"]["config"], "graphs_built": graphs_built,
       "graphs_after_serving": counters["stats"]["unique_graphs"]}
for rows in (3, 1):
    part = {k: v[:rows] for k, v in obs.items()}
    with torch.inference_mode():  # as ChunkedVLA.infer runs it
        a, b = eager.model(*eager_inputs(eager, part)), compiled.model(*eager_inputs(compiled, part))
    out[str(rows)] = float((a.float() - b.float()).norm() / a.float().norm())
json.dump(out, sys.stdout)
"""

INPUTS = """
import torch
from bench.llama_policy import CAMERAS, PROPRIO, prompt_ids

def eager_inputs(policy, obs):
    images = torch.from_numpy(np.stack([obs[f"{c}_image"] for c in CAMERAS], axis=1))
    proprio = torch.from_numpy(np.concatenate([np.asarray(obs[k], dtype=np.float32) for k in PROPRIO], axis=1))
    tokens = np.stack([prompt_ids(t, policy.model.prompt_tokens, policy.model.vocab) for t in obs["task_description"]])
    return images, proprio, torch.from_numpy(tokens)
"""


def test_given_the_compiled_backbone_then_it_computes_the_lean_backbones_function() -> None:
    # the same weights (same seed), bf16 both ways: Inductor's fused kernels keep float32 between the
    # operations eager rounds to bf16, so the two differ by bf16 rounding (~1e-2), not by a wrong network (~1)
    source = COMPILED_CHILD.replace(
        "from tests.policy_fixtures import make_obs", "from tests.policy_fixtures import make_obs\n" + INPUTS
    )
    proc = subprocess.run(
        [sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert got["config"] == "LeanLlama (bench/lean_llama.py) through torch.compile"
    assert got["3"] < 3e-2 and got["1"] < 3e-2, got
    # built once for batch 1 and once for every other size, before serving; serving compiles nothing more
    assert got["graphs_built"] == 2 and got["graphs_after_serving"] == 2, got


INDEXED_DEVICE_CHILD = """
import json, sys, threading
from bench.llama_policy import make_policy
from tests.policy_fixtures import make_obs
from torch._dynamo.utils import counters
# "cpu:0" names an index the inputs' device does not carry, as "cuda" leaves out the index a CUDA tensor has
policy = make_policy(layers=1, hidden=64, intermediate=128, heads=2, resolution=32, device="cpu:0",
                     backbone="lean-compiled")
built = counters["stats"]["unique_graphs"]
serve = threading.Thread(target=lambda: [policy.infer(make_obs(n, cameras=("agentview", "robot0_eye_in_hand"),
                                                                resolution=32, seed=n)) for n in (1, 3, 2)])
serve.start(); serve.join()
json.dump({"graphs_built": built, "graphs_after_serving": counters["stats"]["unique_graphs"]}, sys.stdout)
"""


def test_given_a_device_named_without_the_inputs_index_then_serving_still_compiles_nothing() -> None:
    # On the H200, device="cuda" keyed the prebuilt rotary tables under "cuda" while the inputs said "cuda:0":
    # the forward added a table, and the first multi-row request after serving compiled again (~20 s).
    proc = subprocess.run(
        [sys.executable, "-c", INDEXED_DEVICE_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert got == {"graphs_built": 2, "graphs_after_serving": 2}, got


NO_COMPILER_CHILD = """
import torch._inductor.config as inductor
inductor.cpp.cxx = ("/nonexistent/g++",)  # a machine without the C++ compiler Inductor needs on a CPU
from bench.llama_policy import make_policy
try:
    make_policy(layers=1, hidden=64, intermediate=128, heads=2, resolution=32, device="cpu", backbone="lean-compiled")
except RuntimeError as exc:
    print(exc)
"""


def test_given_no_compiler_then_the_compiled_backbone_fails_at_build_naming_the_uncompiled_one() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", NO_COMPILER_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert "backbone=lean-compiled could not be compiled here" in proc.stdout, proc.stderr[-2000:]
    assert "No working C++ compiler" in proc.stdout and "Use backbone=lean" in proc.stdout


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
