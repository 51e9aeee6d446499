"""The peer, measured: vla-eval 0.8.0's LIBERO benchmark with the 7B stand-in, on the node our harness uses.

Issue 25 asks for rlinf-bench and vla-eval side by side, in one lease, on the same work: the same suite,
the same tasks and initial states, the same horizon, the same network. This script runs vla-eval's side
the way its docs run a sharded evaluation without Docker (``vla-eval run --no-docker --shard-id K
--num-shards N --eval-id X``: N processes, one shared SQLite recording that hands out the work, one
batching model server): here each shard is vla-eval's own ``Orchestrator`` for that shard, called
in-process by ``--shard K`` (the CLI's body, without its YAML loader, whose omegaconf pin clashes with
our lock). The model server is ``bench/vla_eval_adapter.py``: vla-eval's ``PredictModelServer``
(cross-connection batching, per-session chunk buffers) around ``bench/llama_policy.py``.

Measured: wall time from the shards' start to the last shard's exit (the server's start, like
``eval_gpu.py``'s, is reported apart), episodes and episodes per hour, the server's forwards and rows
per second, GPU SM activity (the gpu probe's NVML/GPM sampler) and the node's CPU use.

Our side is ``bench/eval_gpu.py --parts suite`` with the same ``--trials`` (initial states 0..trials-1 of
each task, as vla-eval's ``episodes_per_task``); ``bench/gpu_peers.py --vla-eval-runs`` puts both in
``bench/results/gpu_peers_h200.json``.

Run on the GPU machine (after ``source bench/gpu_setup.sh``, vla-eval on the path)::

    python3 bench/peer_vla_eval.py --shards 15 --server-cores 1 --trials 25 --out $OUT/vla_1.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import GpmSampler, machine, results_path, split_cpus  # noqa: E402

BENCHMARK = "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark"
#: OFT's LIBERO horizons (vla-eval's MAX_STEP_MAPPING agrees), policy steps after the settle steps
HORIZON = {"libero_spatial": 220, "libero_object": 280, "libero_goal": 300, "libero_10": 520}


def eval_config(args: argparse.Namespace, url: str, output_dir: Path) -> dict[str, Any]:
    """vla-eval's eval config (what its YAML would hold) for this work."""
    return {
        "server": {"url": url, "timeout": args.request_timeout},
        "output_dir": str(output_dir),
        "benchmarks": [
            {
                "benchmark": BENCHMARK,
                "params": {"suite": args.suite, "seed": 7, "num_steps_wait": 10},
                "episodes_per_task": args.trials,
                "max_steps": args.max_steps or HORIZON[args.suite],
                **({"max_tasks": args.max_tasks} if args.max_tasks else {}),
            }
        ],
    }


def run_shard(config_path: Path, shard: int, shards: int, eval_id: str, out: Path) -> int:
    """One vla-eval shard: its Orchestrator on this shard's part of the work; its results as JSON."""
    import anyio

    from eval_runner.api import configure_libero

    configure_libero()  # the same LIBERO config (assets, paths) our harness writes, before vla-eval imports libero
    from vla_eval.orchestrator import Orchestrator

    config = json.loads(config_path.read_text())
    orchestrator = Orchestrator(config, shard_id=shard, num_shards=shards, eval_id=eval_id)
    results = anyio.run(orchestrator.run)
    out.write_text(json.dumps(results, default=str))
    return 0


def cpu_times() -> tuple[float, float]:
    """(busy, total) jiffies of the whole node, from /proc/stat."""
    fields = [float(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def start_server(args: argparse.Namespace, work: Path, cpus: list[int]) -> tuple[subprocess.Popen[bytes], float]:
    """The adapter's model server on ``cpus``; returns once it listens (and the seconds that took)."""
    log = work / "server.log"
    cmd = [sys.executable, str(ROOT / "bench" / "vla_eval_adapter.py"), "--port", str(args.port)]
    cmd += [
        "--max-batch",
        str(args.max_batch),
        "--max-wait-ms",
        str(args.max_wait_ms),
        "--stats",
        str(work / "stats.json"),
    ]
    cmd += ["--policy-args", args.policy_args] if args.policy_args else []
    # pinned by the adapter once the policy is loaded, as serve-policy does: a compiled backbone compiles on every core
    cmd += ["--cpus", ",".join(map(str, cpus))]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)
    while "serving " not in log.read_text():
        if proc.poll() is not None or time.perf_counter() - t0 > 600:
            raise SystemExit(f"vla-eval model server did not start: {log.read_text()[-2000:]}")
        time.sleep(0.5)
    time.sleep(1.0)  # the print comes just before the socket binds
    return proc, time.perf_counter() - t0


def tally(shard_files: list[Path]) -> dict[str, Any]:
    """Episodes, successes, errors and steps over every shard's results."""
    episodes = successes = errors = steps = 0
    for path in shard_files:
        for bench in json.loads(path.read_text()):
            errors += int(bench.get("num_errors", 0))
            for task in bench.get("tasks", []):
                for episode in task.get("episodes", []):
                    episodes += 1
                    steps += int(episode.get("steps", 0))
                    metrics = episode.get("metrics") or {}
                    successes += bool(metrics.get("success"))
    return {"episodes": episodes, "successes": successes, "errors": errors, "policy_steps": steps}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Server, N shards, the samplers; the run's figures."""
    work = Path(args.work or f"/tmp/peer-vla-eval-{uuid.uuid4().hex[:8]}")
    work.mkdir(parents=True, exist_ok=True)
    server_cpus, shard_cpus = split_cpus(args.server_cores)
    server, server_start_s = start_server(args, work, server_cpus or shard_cpus)
    config_path = work / "config.json"
    config_path.write_text(json.dumps(eval_config(args, f"ws://127.0.0.1:{args.port}", work / "results")))
    eval_id = uuid.uuid4().hex
    shard_files = [work / f"shard_{k}.json" for k in range(args.shards)]
    busy0, total0 = cpu_times()
    t0 = time.perf_counter()
    procs = []
    with GpmSampler() as gpm:
        for k in range(args.shards):
            cmd = [sys.executable, __file__, "--shard", str(k), "--shards", str(args.shards)]
            cmd += ["--config", str(config_path), "--eval-id", eval_id, "--shard-out", str(shard_files[k])]
            cpu = [shard_cpus[k % len(shard_cpus)]]
            log = (work / f"shard_{k}.log").open("w")
            procs.append(
                subprocess.Popen(
                    cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=(lambda c=cpu: os.sched_setaffinity(0, c))
                )
            )
        deadline = t0 + args.timeout
        codes = [p.returncode if _alive(p, deadline) else 124 for p in procs]
        wall = time.perf_counter() - t0
    busy1, total1 = cpu_times()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)
    stats = json.loads((work / "stats.json").read_text()) if (work / "stats.json").exists() else {}
    done = [f for f, code in zip(shard_files, codes, strict=True) if code == 0 and f.exists()]
    counts = tally(done)
    failed = {k: code for k, code in enumerate(codes) if code != 0}
    return {
        "status": "complete"
        if not failed and counts["episodes"] == args.trials * (args.max_tasks or 10)
        else "incomplete",
        "failed_shards": {k: (work / f"shard_{k}.log").read_text()[-1500:] for k in failed},
        "wall_s": round(wall, 1),
        "server_start_s": round(server_start_s, 1),
        **counts,
        "episodes_per_h": round(counts["episodes"] / wall * 3600, 1) if wall else None,
        "policy_rows_per_s": round(stats.get("rows", 0) / wall, 1) if wall else None,
        "server": stats,
        "gpu": gpm.result,
        "cpu_busy_pct": round(100 * (busy1 - busy0) / (total1 - total0), 1) if total1 > total0 else None,
    }


def _alive(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait for ``proc`` until ``deadline``; kill it (and report False) when it is still running then."""
    try:
        proc.wait(timeout=max(1.0, deadline - time.perf_counter()))
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="libero_spatial", choices=sorted(HORIZON))
    parser.add_argument("--trials", type=int, default=50, help="episodes per task (initial states 0..trials-1)")
    parser.add_argument("--max-tasks", type=int, default=0, help="the suite's first K tasks (0: all)")
    parser.add_argument("--max-steps", type=int, default=0, help="policy steps per episode (0: the OFT horizon)")
    parser.add_argument("--shards", type=int, default=0, help="shard processes (0: the cores left to them)")
    parser.add_argument("--server-cores", type=int, default=1, help="cores kept for the model server")
    parser.add_argument("--max-batch", type=int, default=16, help="the server's max_batch_size")
    parser.add_argument("--max-wait-ms", type=float, default=10.0, help="the server's max_wait_time")
    parser.add_argument("--policy-args", default="", help="bench/llama_policy.py options (smoke: 'layers=1,...')")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--request-timeout", type=float, default=600.0, help="vla-eval's server.timeout")
    parser.add_argument("--timeout", type=float, default=540.0, help="seconds before the shards are killed")
    parser.add_argument("--work", help="folder for logs and the recording (default: a new one under /tmp)")
    parser.add_argument("--out", type=Path, help="result file (default $OUT/vla_eval.json)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    # one shard (internal: the parent starts these)
    parser.add_argument("--shard", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--eval-id", help=argparse.SUPPRESS)
    parser.add_argument("--shard-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.shard is not None:
        return run_shard(args.config, args.shard, args.shards, args.eval_id, args.shard_out)
    out = results_path(args.out, update_results=args.update_results)
    if args.out is None:
        out = out.with_name("vla_eval.json")
    args.shards = args.shards or len(split_cpus(args.server_cores)[1])
    from importlib.metadata import version

    run = measure(args)
    doc = {
        "benchmark": "peer_vla_eval",
        "harness": {"name": "vla-eval", "version": version("vla-eval")},
        "suite": args.suite,
        "trials_per_task": args.trials,
        "max_steps": args.max_steps or HORIZON[args.suite],
        "settle_steps": 10,
        "shards": args.shards,
        "server_cores": args.server_cores,
        "max_batch": args.max_batch,
        "max_wait_ms": args.max_wait_ms,
        "machine": machine(),
        "command": " ".join(["python3", "bench/peer_vla_eval.py", *sys.argv[1:]]),
        "run": run,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1))
    print(json.dumps({k: run[k] for k in ("status", "wall_s", "episodes", "episodes_per_h", "policy_rows_per_s")}))
    print(
        f"gpu {run['gpu']}  cpu {run['cpu_busy_pct']} %  server {run['server'].get('mean_rows_per_forward')} rows/forward"
    )
    return 0 if run["status"] == "complete" else 1


if __name__ == "__main__":
    sys.exit(main())
