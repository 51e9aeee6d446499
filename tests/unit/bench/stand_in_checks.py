"""The 7B stand-in's checks that need transformers or torch.compile, run together in one child process.

``python -m tests.unit.bench.stand_in_checks OUT.json`` writes one JSON object: a key per check, holding what
the check saw or, when it raised, ``{"error": <traceback>}``, so one broken check does not hide the others.

The checks run in a child because transformers pulls in triton, whose bundled LLVM crashes a process that
already loaded Mesa's (the simulator tests do). They run in one child because importing torch and
transformers and warming torch.compile up is most of their cost: paid once here, not once per test.
"""

from __future__ import annotations

import json
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch._dynamo.utils import counters

from bench.llama_policy import CAMERAS, PROPRIO, ChunkedVLA, make_policy, prompt_ids
from tests.policy_fixtures import make_obs

BOTH_CAMERAS = ("agentview", "robot0_eye_in_hand")
#: the stand-in at its smallest: one layer, 32 px images
TINY = {"layers": 1, "hidden": 64, "intermediate": 128, "heads": 2, "resolution": 32, "device": "cpu"}
#: seeds of the random weights and inputs the lean backbone is compared with transformers' at
HF_SEEDS = (0, 1)


def fresh_compiler_state() -> None:
    """Forget every compiled graph and the graph counters, as a new process starts: each check counts its own."""
    torch._dynamo.reset()
    counters.clear()


def no_compiler() -> dict[str, Any]:
    """What building ``lean-compiled`` says on a machine without the C++ compiler Inductor needs on a CPU.

    Runs first: nothing has been compiled in this process yet, as on such a machine."""
    import torch._inductor.config as inductor

    found = inductor.cpp.cxx
    inductor.cpp.cxx = ("/nonexistent/g++",)
    try:
        make_policy(**TINY, backbone="lean-compiled")
        message = ""
    except RuntimeError as exc:
        message = str(exc)
    finally:
        inductor.cpp.cxx = found
        fresh_compiler_state()
    return {"message": message}


def hf_equivalence(seed: int) -> dict[str, Any]:
    """The lean backbone loaded with transformers' LlamaModel weights: relative errors, and causality."""
    from transformers import LlamaConfig, LlamaModel

    from bench.lean_llama import LeanLlama, load_from_hf

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=100,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
    )
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
        changed = embeds.clone()
        changed[:, 6:] += 1.0
        prefix_kept = bool(torch.equal(lean(embeds)[:, :6], lean(changed)[:, :6]))
    return {"errors": errors, "prefix_kept": prefix_kept}


def lean_policy() -> dict[str, Any]:
    """The policy on the lean backbone: its chunks; and the refusal of a backbone it does not know."""
    obs = make_obs(3, cameras=BOTH_CAMERAS, resolution=32, seed=1)
    chunks = make_policy(**TINY, backbone="lean").act(obs)
    try:
        make_policy(**TINY, backbone="vllm")
        refused = ""
    except ValueError as exc:
        refused = str(exc)
    return {"shape": list(chunks.shape), "finite": bool(np.isfinite(chunks).all()), "refused": refused}


def runner_chunks() -> dict[str, Any]:
    """The default (transformers) backbone's chunks executed by the runner, and handed out one per call."""
    obs = make_obs(3, cameras=BOTH_CAMERAS, resolution=32, seed=1)
    obs["episode_id"] = [f"t0-s{i}-a0" for i in range(3)]
    runner = make_policy(**TINY)
    chunks = runner.act(obs)
    per_call = make_policy(**TINY, chunks="policy")  # same seed: the same random weights
    steps = np.stack([per_call.act(obs) for _ in range(8)], axis=1)
    try:
        make_policy(**TINY, chunks="server")
        refused = ""
    except ValueError as exc:
        refused = str(exc)
    return {
        "shape": list(chunks.shape),
        "forwards": [runner.forwards, per_call.forwards],
        "max_diff": float(np.abs(steps - chunks).max()),
        "grippers": sorted({float(g) for g in np.unique(chunks[..., -1])}),
        "max_arm": float(np.abs(chunks[..., :6]).max()),
        "executed_by": runner.describe()["chunks_executed_by"],
        "refused": refused,
    }


def serve_from_a_thread(policy: ChunkedVLA, sizes: tuple[int, ...]) -> None:
    """Batches of ``sizes`` rows through ``policy.infer`` from another thread, as the server's model thread calls it."""
    obs = [make_obs(n, cameras=BOTH_CAMERAS, resolution=32, seed=n) for n in sizes]
    serve = threading.Thread(target=lambda: [policy.infer(o) for o in obs])
    serve.start()
    serve.join()


def model_inputs(policy: ChunkedVLA, obs: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The tensors ``ChunkedVLA.infer`` hands its model for ``obs``."""
    images = torch.from_numpy(np.stack([obs[f"{c}_image"] for c in CAMERAS], axis=1))
    proprio = torch.from_numpy(np.concatenate([np.asarray(obs[k], dtype=np.float32) for k in PROPRIO], axis=1))
    tokens = np.stack([prompt_ids(t, policy.model.prompt_tokens, policy.model.vocab) for t in obs["task_description"]])
    return images, proprio, torch.from_numpy(tokens)


def compiled() -> dict[str, Any]:
    """``lean-compiled`` beside ``lean`` (same seed, same weights): graphs built and served, and how far apart."""
    fresh_compiler_state()
    two_layers = {**TINY, "layers": 2}
    obs = make_obs(3, cameras=BOTH_CAMERAS, resolution=32, seed=2)
    eager = make_policy(**two_layers, backbone="lean")
    policy = make_policy(**two_layers, backbone="lean-compiled")  # compiles for batches 2 and 1 while it is built
    out: dict[str, Any] = {"config": policy.describe()["backbone"]["config"]}
    out["graphs_built"] = counters["stats"]["unique_graphs"]
    # served later from the server's model thread, at other batch sizes: nothing may compile mid-run
    serve_from_a_thread(policy, (3, 7, 1, 16))
    out["graphs_after_serving"] = counters["stats"]["unique_graphs"]
    for rows in (3, 1):
        part = {k: v[:rows] for k, v in obs.items()}
        with torch.inference_mode():  # as ChunkedVLA.infer runs it
            a, b = eager.model(*model_inputs(eager, part)), policy.model(*model_inputs(policy, part))
        out[str(rows)] = float((a.float() - b.float()).norm() / a.float().norm())
    return out


def indexed_device() -> dict[str, Any]:
    """``lean-compiled`` built for ``cpu:0``, an index the inputs' device does not carry: graphs built and served."""
    fresh_compiler_state()
    # as device="cuda" leaves out the index a CUDA tensor has
    policy = make_policy(**{**TINY, "device": "cpu:0"}, backbone="lean-compiled")
    built = counters["stats"]["unique_graphs"]
    serve_from_a_thread(policy, (1, 3, 2))
    return {"graphs_built": built, "graphs_after_serving": counters["stats"]["unique_graphs"]}


#: in this order: no_compiler needs a process that has compiled nothing yet
CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "no_compiler": no_compiler,
    **{f"hf_equivalence_seed{seed}": (lambda seed=seed: hf_equivalence(seed)) for seed in HF_SEEDS},
    "lean_policy": lean_policy,
    "runner_chunks": runner_chunks,
    "compiled": compiled,
    "indexed_device": indexed_device,
}


def main(out: Path) -> int:
    results: dict[str, Any] = {}
    for name, check in CHECKS.items():
        try:
            results[name] = check()
        except Exception:  # reported to the test that reads this check, not to all of them
            results[name] = {"error": traceback.format_exc()}
    out.write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
