"""``bench/eval_gpu.py``'s parts with the 7B stand-in: its latency in process, and LIBERO runs served by
``rlinf-bench serve-policy`` (one task, or the whole suite) with the GPU sampled meanwhile."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import POLICY_SPEC, RESOLUTION, SUITE, TASK, GpmSampler, run_cli, split_cpus  # noqa: E402
from bench.eval_gpu_harness import evaluate_cmd, result_figures  # noqa: E402


def policy_latency(batches: list[int], iters: int) -> dict[str, Any]:
    """p50/p99 of one forward (every row needs a new chunk) of the random-init 7B policy, in process."""
    import torch

    from bench.llama_policy import example_obs, make_policy

    t0 = time.perf_counter()
    policy = make_policy()
    build_s = time.perf_counter() - t0
    out: dict[str, Any] = {"build_s": round(build_s, 1), "describe": policy.describe(), "iters": iters}
    for b in batches:
        obs = example_obs(b, RESOLUTION)
        for _ in range(3):
            policy.infer(obs)
        times = []
        for _ in range(iters):
            torch.cuda.synchronize()
            t = time.perf_counter()
            policy.infer(obs)  # ends with .cpu(): synchronous
            times.append(1000 * (time.perf_counter() - t))
        out[str(b)] = {
            "p50": round(float(np.percentile(times, 50)), 2),
            "p99": round(float(np.percentile(times, 99)), 2),
        }
        print(f"latency batch {b}: p50 {out[str(b)]['p50']} ms p99 {out[str(b)]['p99']} ms", flush=True)
    out["gpu_memory_gb"] = round(torch.cuda.max_memory_allocated() / 1e9, 1)
    del policy
    torch.cuda.empty_cache()
    return out


def _after_serving(server_log: str) -> str:
    """What the server logged after it said "serving" (nothing when it never did)."""
    _, serving, after = server_log.partition("serving ")
    return after if serving else ""


def recompiles_while_serving(server_log: str) -> int:
    """Recompiles Dynamo logged after the server said "serving": each one stalled the model mid-run."""
    return _after_serving(server_log).count("Recompiling function")


def recompile_reasons_while_serving(server_log: str) -> list[str]:
    """The guard failures Dynamo gave for those recompiles (which input or state changed), one line each."""
    marker = "[__recompiles]     - "
    return [line.partition(marker)[2].strip() for line in _after_serving(server_log).splitlines() if marker in line]


def serve(port: int, log_path: Path, spec: str, extra: list[str] | None = None) -> subprocess.Popen[bytes]:
    # `rlinf-bench serve-policy` itself: the GPU machine runs the tree, not an installed package, so the CLI's
    # registry of subcommands (entry points) is not there
    launcher = "import sys; from eval_runner.api import serve_policy; sys.exit(serve_policy(sys.argv[1:]))"
    cmd = [sys.executable, "-c", launcher, "--policy", spec, "--port", str(port), *(extra or [])]
    # Dynamo logs each recompile of a compiled policy (backbone=lean-compiled): server_recompiles counts them
    env = {**os.environ, "TORCH_LOGS": os.environ.get("TORCH_LOGS", "recompiles")}
    proc = subprocess.Popen(cmd, stdout=log_path.open("w"), stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    deadline = time.monotonic() + 600
    while "serving " not in log_path.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"policy server did not start: {log_path.read_text()[-2000:]}")
        time.sleep(1)
    return proc


def task_wall(
    n: int,
    trials: int,
    max_steps: int,
    cache: Path,
    work: Path,
    port: int,
    timeout: float,
    *,
    chunks: str = "runner",
    tasks: str = str(TASK),
    tag: str = "task",
    suite: str = SUITE,
    policy_options: str = "",
    server_args: str = "",
    server_cores: int = 0,
    inflight: int = 1,
) -> dict[str, Any]:
    """``tasks`` x ``trials`` episodes at the full horizon through the served 7B policy.

    ``chunks``: who executes the 8-step chunks (``runner``: the workers, open loop, rendering only each
    chunk's last step; ``policy``: the policy hands out one action per round trip).
    """
    spec = f"{POLICY_SPEC}?chunks={chunks}{'&' + policy_options if policy_options else ''}"
    server_cpus, eval_cpus = split_cpus(server_cores)
    extra = shlex.split(server_args) + (["--cpus", ",".join(map(str, server_cpus))] if server_cpus else [])
    t0 = time.perf_counter()
    server_log = work / f"{tag}_server.log"
    server = serve(port, server_log, spec, extra)
    start_s = time.perf_counter() - t0
    out, log = work / f"{tag}.json", work / f"{tag}.log"
    client = f"server:ws://127.0.0.1:{port}?inflight={inflight}"
    cmd = evaluate_cmd(n, trials, max_steps, client, out, cache, [], tasks, suite)
    try:
        with GpmSampler() as gpm:
            rc, wall = run_cli(cmd, log, timeout, eval_cpus if server_cpus else None)
    finally:
        server.terminate()
        server.wait(timeout=60)
    row: dict[str, Any] = {
        "command": shlex.join(["rlinf-bench", "evaluate", *cmd[3:]]),
        "server_command": shlex.join(["rlinf-bench", "serve-policy", "--policy", spec, "--port", str(port), *extra]),
        "server_start_s": round(start_s, 1),
        "server_cpus": server_cpus,
        "evaluate_cpus": eval_cpus if server_cpus else "all (not pinned)",
        "inflight": inflight,
        "exit": rc,
        "wall_s": round(wall, 1),
        "gpu": gpm.result,
    }
    server_output = server_log.read_text()
    row["server_recompiles"] = recompiles_while_serving(server_output)
    row["server_recompile_reasons"] = recompile_reasons_while_serving(server_output)
    for line in server_output.splitlines():
        if line.startswith("policy server stopped: "):
            row["server"] = json.loads(line.removeprefix("policy server stopped: "))
    if out.exists():
        result = json.loads(out.read_text())
        row |= result_figures(result)
        client_policy = result["provenance"]["extra"].get("policy", {})
        row["forward"] = client_policy.get("server", {}).get("forward")
        row["server_batching"] = client_policy.get("server_batching")
    else:
        row["error"] = log.read_text()[-2000:]
    return row


def served_run(args: argparse.Namespace, n: int, cache: Path, work: Path, **kwargs: Any) -> dict[str, Any]:
    """:func:`task_wall` with the command line's settings; a failure is recorded, not raised."""
    try:
        return task_wall(
            n,
            args.trials,
            args.max_steps,
            cache,
            work,
            args.port,
            args.timeout,
            suite=args.suite,
            policy_options=args.policy_options,
            server_args=args.server_args,
            server_cores=args.server_cores,
            inflight=args.inflight,
            **kwargs,
        )
    except Exception as exc:  # keep what the other parts measured
        return {"error": f"{type(exc).__name__}: {exc}"}


def project_suite(task: dict[str, Any], tasks: int = 10) -> dict[str, Any]:
    """The 10-task suite from one task: the fixed start once, then the rolling phase times ``tasks``.

    Setup (process start, first scene build) is paid once per run; every further task adds its episodes'
    rolling time (stepping, resets, a scene build per worker when it changes task, overlapped).
    """
    fixed = max(0.0, task["wall_s"] - task["rolling_s"])
    return {
        "suite_wall_s": round(fixed + tasks * task["rolling_s"], 1),
        "method": f"(wall - rolling phase) + {tasks} x rolling phase of the measured task",
        "fixed_s": round(fixed, 1),
        "upper_bound_s": round(tasks * task["wall_s"], 1),
    }
