"""Rows per second of the 7B stand-in's forward on one GPU, per backbone, alone on the machine.

The stand-in's compute bound: how fast one GPU runs ``bench/llama_policy.py``'s forward with nothing else
on it, for each backbone (``hf``: transformers' LlamaModel; ``lean``: the same network with fused
projections, ``bench/lean_llama.py``; ``lean-compiled``: ``lean`` through torch.compile) and batch size.
A variant may carry make_policy options (``lean?graphs=8``: a CUDA graph of batch 8). The backbones are
timed in turns (A B A B ...), each turn the median of ``--iters`` forwards after warm-up, through ``ChunkedVLA.infer`` (host arrays in,
actions out: the server's path). It also times one bf16 matrix product of the backbone's largest shape, as
the ceiling the forward's FLOPs could reach, and counts the forward's FLOPs per row.

Run on the GPU machine (no LIBERO needed)::

    python3 bench/forward_speed.py --batches 8,16 --rounds 2 --out $OUT/forward.json
    python3 bench/forward_speed.py --backbones lean,lean-compiled --batches 8 --profile   # GPU ms by kernel kind
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import results_path  # noqa: E402  (the same guard on bench/results/)
from bench.llama_policy import BACKBONES, LLAMA_7B, example_obs, make_policy, option_value  # noqa: E402


def forward_flops_per_row(tokens: int) -> float:
    """Matrix-product FLOPs of one row through the 7B backbone (2 per multiply-add; attention included)."""
    hidden, inter, layers = LLAMA_7B["hidden_size"], LLAMA_7B["intermediate_size"], LLAMA_7B["num_hidden_layers"]
    per_token = 2 * (4 * hidden * hidden + 3 * hidden * inter)  # q, k, v, o; gate, up, down
    attention = 2 * 2 * tokens * hidden  # scores and weighted values, full (causal halves it in the kernel)
    return float(layers * tokens * (per_token + attention))


def variant_options(variant: str) -> dict[str, Any]:
    """``lean`` or ``lean?graphs=8+16`` -> make_policy's keyword arguments (a backbone and its options)."""
    backbone, _, query = variant.partition("?")
    if backbone not in BACKBONES:
        raise SystemExit(f"--backbones: unknown backbone {backbone!r}; use one of {', '.join(BACKBONES)}")
    pairs = [part.partition("=") for part in query.split("&") if part]  # not parse_qsl: it reads + as a space
    options = {key: option_value(value) for key, _, value in pairs}
    return {"backbone": backbone, **options}


def time_infer(policy: Any, obs: dict[str, Any], iters: int) -> float:
    """Median seconds of one ``infer`` (ends in a device-to-host copy, so it is synchronous)."""
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        policy.infer(obs)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def gemm_tflops(m: int, k: int, n: int, iters: int = 20) -> float:
    """bf16 TFLOP/s of one ``[m, k] @ [k, n]`` product on random data (CUDA events, after warm-up)."""
    import torch

    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * m * k * n * iters / (start.elapsed_time(end) / 1000) / 1e12


#: kernel-name patterns, in the order they are tried, and the part of the forward each stands for
KERNEL_KINDS = (
    ("attention", ("flash", "fmha", "attention", "sdpa", "cudnn")),
    ("matrix products", ("gemm", "cutlass", "xmma", "nvjet", "cublas", "sm90_", "matmul", "triton_tem")),
    ("norms", ("norm", "rowwisemoments")),
    ("copies", ("copy", "memcpy", "memset", "cat", "fill")),
    ("elementwise", ("elementwise", "vectorized", "silu", "mul", "add")),
)


def kernel_kind(name: str) -> str:
    """Which part of the forward a CUDA kernel belongs to, from its name (``other`` when none matches)."""
    lowered = name.lower()
    if lowered.startswith(("triton_poi", "triton_per", "triton_red")):  # Inductor's fusions, named after their ops
        return "norms" if "norm" in lowered else "elementwise"
    for kind, patterns in KERNEL_KINDS:
        if any(p in lowered for p in patterns):
            return kind
    return "other"


def profile_forward(policy: Any, obs: dict[str, Any], iters: int = 3, top: int = 12) -> dict[str, Any]:
    """GPU time per forward by kind of kernel, and the longest kernels, from the PyTorch profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            policy.infer(obs)
    kernels: dict[str, float] = {}
    for event in prof.key_averages():
        us = float(getattr(event, "self_device_time_total", 0.0) or getattr(event, "self_cuda_time_total", 0.0))
        if us > 0:
            kernels[event.key] = kernels.get(event.key, 0.0) + us / iters
    by_kind: dict[str, float] = {}
    for name, us in kernels.items():
        kind = kernel_kind(name)
        by_kind[kind] = by_kind.get(kind, 0.0) + us
    longest = sorted(kernels.items(), key=lambda kv: -kv[1])[:top]
    return {
        "gpu_ms_per_forward": round(sum(kernels.values()) / 1000, 2),
        "ms_by_kind": {k: round(v / 1000, 2) for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])},
        "longest_kernels_ms": [[name[:120], round(us / 1000, 3)] for name, us in longest],
    }


def run(backbones: list[str], batches: list[int], rounds: int, iters: int, *, profile: bool = False) -> dict[str, Any]:
    import torch

    policies = {name: make_policy(**variant_options(name)) for name in backbones}
    tokens = next(iter(policies.values())).describe()["backbone"]["tokens_per_row"]
    flops = forward_flops_per_row(tokens)
    out: dict[str, Any] = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "tokens_per_row": tokens,
        "tflop_per_row": round(flops / 1e12, 3),
        "gemm_tflops": {},
        "rows_per_s": {name: {str(b): [] for b in batches} for name in backbones},
    }
    for b in batches:
        m = b * tokens
        out["gemm_tflops"][str(b)] = round(
            gemm_tflops(m, LLAMA_7B["hidden_size"], 2 * LLAMA_7B["intermediate_size"]), 1
        )
        obs = example_obs(b, seed=b)
        for policy in policies.values():
            for _ in range(3):
                policy.infer(obs)
        for r in range(rounds):
            for name, policy in policies.items():
                rate = b / time_infer(policy, obs, iters)
                out["rows_per_s"][name][str(b)].append(round(rate, 2))
                print(
                    f"round {r + 1} batch {b} {name}: {rate:.1f} rows/s ({rate * flops / 1e12:.0f} TFLOP/s)", flush=True
                )
    if profile:
        obs = example_obs(batches[0], seed=batches[0])
        out["profile_batch"] = batches[0]
        out["profile"] = {name: profile_forward(policy, obs) for name, policy in policies.items()}
        for name, prof in out["profile"].items():
            print(f"profile {name} batch {batches[0]}: {json.dumps(prof)}", flush=True)
    out["tflops_achieved"] = {
        name: {b: [round(r * flops / 1e12) for r in rates] for b, rates in per_batch.items()}
        for name, per_batch in out["rows_per_s"].items()
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--backbones",
        default="hf,lean",
        help="comma-separated; each may carry make_policy options, e.g. 'lean?graphs=8+16' (sizes joined by +)",
    )
    parser.add_argument("--batches", default="8,16")
    parser.add_argument("--rounds", type=int, default=2, help="turns per backbone and batch size")
    parser.add_argument("--iters", type=int, default=10, help="forwards per turn (the median is kept)")
    parser.add_argument(
        "--out", type=Path, help="result file (default: $OUT/forward_speed.json, else a temporary file)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also break one forward's GPU time down by kernel (first batch size)"
    )
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    args = parser.parse_args(argv)
    # refuse a tracked --out now, before minutes of GPU work
    out = results_path(args.out, update_results=args.update_results, name="forward_speed.json")
    result = run(
        args.backbones.split(","),
        [int(b) for b in args.batches.split(",")],
        args.rounds,
        args.iters,
        profile=args.profile,
    )
    result["command"] = "python3 bench/forward_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"results: {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
