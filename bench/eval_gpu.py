"""GPU-scale evaluation on one node: raw LIBERO vs the harness, a 7B policy's latency, a task's wall time.

Runs on a GPU machine (EGL rendering on the GPU) from the repository root. Parts (``--parts``):

- ``raw``: N processes step LIBERO-Spatial task 0 directly (``LiberoEnv``, agentview + wrist cameras
  at 256 px, the zero action), no harness; all start together after warm-up and step for
  ``--raw-seconds``; the aggregate is the sum of each process's steps/s.
- ``harness``: ``rlinf-bench evaluate`` (its parser and runner, without the environment preflight) with N workers and
  ``builtin:zero`` asking for the same two cameras, ``--episodes-per-worker`` episodes of 220 steps;
  its steady-state figure (the workers' stepping phases, resets excluded) against the raw aggregate of the
  same N measured just before it.
- ``latency``: the 7B-class random-init policy of ``bench/llama_policy.py`` in process: p50/p99 of
  one forward (a new action chunk for every row) at batch 1, 4, 8, 15.
- ``task``: the same policy served by ``rlinf-bench serve-policy``, and one task x ``--trials`` of
  LIBERO-Spatial at the full horizon (220 steps + 10 settle) with N workers through
  ``server:ws://``: the wall time, with NVML/GPM SM activity sampled by the gpu probe's sampler
  during the run; the suite's wall time (10 tasks) is projected from it.

Every figure is written to ``--out`` as soon as it is measured (a run cut short keeps what it had); by default
``$OUT/eval_gpu.json`` on the device, else a new temporary file. The tracked figures in ``bench/results/`` are
written only when asked: an ``--out`` there needs ``--update-results``.
``--combine A.json B.json --out C.json`` merges the outputs of separate runs.

The parts live beside this driver: ``eval_gpu_raw.py``, ``eval_gpu_harness.py``, ``eval_gpu_served.py``, and
what they share in ``eval_gpu_common.py``.

Example (the commands behind bench/results/eval_gpu_h200.json are recorded in it under ``commands``)::

    python3 bench/eval_gpu.py --parts raw,harness --workers 4,8,15 --out $OUT/a.json
    python3 bench/eval_gpu.py --parts latency,task --workers 15 --trials 50 --out $OUT/b.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import RESOLUTION, SUITE, TASK, Report, combine, results_path, split_cpus  # noqa: E402
from bench.eval_gpu_harness import cli_evaluate, harness  # noqa: E402
from bench.eval_gpu_raw import raw_aggregate, render_check  # noqa: E402
from bench.eval_gpu_served import policy_latency, project_suite, served_run  # noqa: E402
from rlinf_bench.suites import get_suite  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The driver's command line; ``--workers auto`` becomes the cores left after ``--server-cores``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="raw,harness", help="check,raw,raw_episodes,harness,latency,task,suite")
    parser.add_argument("--workers", default="4,8,15", help="N values (task: the first one)")
    parser.add_argument("--raw-seconds", type=float, default=20.0)
    parser.add_argument(
        "--raw-physics",
        default="once",
        choices=["once", "stock", "once,stock", "stock,once"],
        help="raw part: each sub-step's forward pass once (the harness's way), robosuite's stock loop, or both",
    )
    parser.add_argument(
        "--raw-episode-seconds", type=float, default=30.0, help="raw_episodes: window, long enough for a few resets"
    )
    parser.add_argument("--episodes-per-worker", type=int, default=2)
    parser.add_argument(
        "--harness-tasks",
        default=str(TASK),
        help="raw_episodes/harness parts: task ids (e.g. 0,1,...,9): one task's initial states follow one serial "
        "reference RNG chain, several tasks' chains run side by side",
    )
    parser.add_argument("--trials", type=int, default=50, help="task/suite parts: episodes per task")
    parser.add_argument("--chunks", default="runner", help="task part: runner, policy, or both (runner,policy)")
    parser.add_argument("--batches", default="1,4,8,15", help="latency part: batch sizes")
    parser.add_argument("--iters", type=int, default=30, help="latency part: timed forwards per batch size")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--policy-options",
        default="",
        help="extra make_policy options, e.g. layers=1&hidden=64&device=cpu (smoke runs)",
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        help="policy steps per episode (default: the suite's OpenVLA-OFT horizon, 220 on libero_spatial; smoke runs: "
        "fewer)",
    )
    parser.add_argument("--resolution", type=int, default=RESOLUTION, help="camera px (smoke runs on a CPU: fewer)")
    parser.add_argument("--work", type=Path, help="folder for the runs' result files and logs (default: a temp dir)")
    parser.add_argument("--timeout", type=float, default=540.0, help="per harness/task run, seconds")
    parser.add_argument("--out", type=Path, help="result file (default: $OUT/eval_gpu.json, else a temporary file)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    parser.add_argument("--suite", default=SUITE, help="LIBERO suite of every part")
    parser.add_argument(
        "--server-cores",
        type=int,
        default=0,
        help="task/suite parts: cores reserved for the policy server (serve-policy --cpus), the evaluation pinned "
        "to the rest; 0: nothing pinned (the old runs). --workers auto = the evaluation's cores",
    )
    parser.add_argument("--server-args", default="", help="more serve-policy flags, e.g. '--max-batch 16'")
    parser.add_argument("--inflight", type=int, default=1, help="task/suite parts: the client's ?inflight=K")
    parser.add_argument("--combine", nargs="*", type=Path, help="merge these result files into --out; run nothing")
    args = parser.parse_args(argv)
    if args.max_steps is None:
        args.max_steps = get_suite(args.suite).max_steps
    if args.workers == "auto":
        args.workers = str(len(split_cpus(args.server_cores)[1]))
    args.parts = set(args.parts.split(","))
    args.ns = [int(x) for x in args.workers.split(",") if x]
    args.harness_tasks = tuple(int(x) for x in args.harness_tasks.split(",") if x) or (TASK,)
    return args


def run_raw(args: argparse.Namespace, report: Report, n: int, cache: Path) -> None:
    """The raw loop at N = ``n``: stepping only (per ``--raw-physics``), then whole episodes if asked."""
    cores = len(os.sched_getaffinity(0))
    for physics in args.raw_physics.split(",") if "raw" in args.parts else []:
        name = "raw" if physics == "once" else f"raw_{physics}_physics"
        raw = raw_aggregate(
            n,
            args.raw_seconds,
            max(1, cores // n),
            args.resolution,
            cache,
            physics_once=physics == "once",
            suite=args.suite,
        )
        report.put(name, str(n), raw)
        report.put(f"{name}_steps_per_s", str(n), raw.get("steps_per_s"))
        print(f"{name} N={n}: {raw.get('steps_per_s')} steps/s {raw.get('error', '')}", flush=True)
    if "raw_episodes" in args.parts:
        raw = raw_aggregate(
            n,
            args.raw_episode_seconds,
            max(1, cores // n),
            args.resolution,
            cache,
            True,
            args.max_steps,
            args.harness_tasks,
            suite=args.suite,
        )
        report.put("raw_episodes", str(n), raw)
        report.put("raw_episodes_steps_per_s", str(n), raw.get("steps_per_s"))
        print(f"raw episodes N={n}: {raw.get('steps_per_s')} steps/s {raw.get('error', '')}", flush=True)


def run_harness(args: argparse.Namespace, report: Report, n: int, cache: Path, work: Path) -> None:
    """The harness at N = ``n``, over the raw loop of the same N."""
    key = str(n)
    trials = min(50, -(-args.episodes_per_worker * n // len(args.harness_tasks)))
    row = harness(
        n, trials, args.max_steps, args.resolution, cache, work, [], args.timeout, args.harness_tasks, args.suite
    )
    report.put("harness", key, row)
    report.put("harness_steps_per_s", key, row.get("steady_env_steps_per_s"))
    raw_rate = report.doc.get("raw_steps_per_s", {}).get(key)
    if raw_rate and row.get("steady_env_steps_per_s"):
        report.put("harness_over_raw", key, round(row["steady_env_steps_per_s"] / raw_rate, 3))
    # like with like: whole episodes with resets on both sides, every worker/process busy
    report.put("harness_occupied_steps_per_s", key, row.get("occupied_env_steps_per_s"))
    raw_episodes = report.doc.get("raw_episodes_steps_per_s", {}).get(key)
    if raw_episodes and row.get("occupied_env_steps_per_s"):
        ratio = round(row["occupied_env_steps_per_s"] / raw_episodes, 3)
        report.put("harness_occupied_over_raw_episodes", key, ratio)
    print(f"harness N={n}: {row.get('steady_env_steps_per_s')} steps/s (exit {row['exit']})", flush=True)


def run_latency(args: argparse.Namespace, report: Report) -> None:
    """The 7B stand-in's forward in this process, per batch size."""
    try:
        lat = policy_latency([int(b) for b in args.batches.split(",")], args.iters)
    except Exception as exc:  # keep going: the task part serves the policy in its own process
        lat = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"latency failed: {lat['error']}", flush=True)
    report.put("policy", None, {k: v for k, v in lat.items() if not k.isdigit()})
    report.put("policy_latency_ms", None, {k: v for k, v in lat.items() if k.isdigit()})


def run_task(args: argparse.Namespace, report: Report, cache: Path, work: Path) -> None:
    """Task 0 served, per ``--chunks``; a full-length run also projects the ten-task suite from it."""
    n = args.ns[0]
    for chunks in args.chunks.split(","):
        key = "task_7b" if chunks == "runner" else f"task_7b_chunks_{chunks}"
        task = served_run(args, n, cache, work, chunks=chunks, tag=key)
        report.put(key, None, task)
        print(f"task x {args.trials} trials, N={n}, 7B served, chunks={chunks}: {task.get('wall_s')} s", flush=True)
        if (
            chunks == "runner"
            and "rolling_s" in task
            and args.trials == 50
            and args.max_steps == get_suite(args.suite).max_steps
        ):
            projection = project_suite(task)
            report.put("suite_projection", None, projection)
            if "suite_wall_measured" not in report.doc:
                report.put("suite_wall_s", None, projection["suite_wall_s"])
                report.put("suite_wall_measured", None, False)


def run_suite(args: argparse.Namespace, report: Report, cache: Path, work: Path) -> None:
    """All ten tasks served, ``--trials`` each: the wall time the issue's goals are about."""
    n = args.ns[0]
    suite = served_run(args, n, cache, work, tasks=",".join(map(str, range(10))), tag="suite_7b")
    report.put("suite_7b", None, suite)
    print(f"suite x {args.trials} trials, N={n}, 7B served: {suite.get('wall_s')} s", flush=True)
    if suite.get("status") == "complete":
        report.put("suite_wall_s", None, suite["wall_s"])
        report.put("suite_wall_measured", None, True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out = results_path(args.out, update_results=args.update_results)
    print(f"results: {args.out}", flush=True)
    if args.combine:
        return combine(args.combine, args.out)
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    report = Report(args.out, sys.argv, args)
    cache = Path(tempfile.mkdtemp(prefix="eval-gpu-"))
    work = args.work or Path(tempfile.mkdtemp(prefix="eval-gpu-runs-"))
    work.mkdir(parents=True, exist_ok=True)
    if "check" in args.parts:
        check = render_check(args.resolution, cache, suite=args.suite)
        report.put("render_check", None, check)
        print(f"render check: {check}", flush=True)
    for n in args.ns if args.parts & {"raw", "raw_episodes", "harness"} else []:
        run_raw(args, report, n, cache)
        if "harness" in args.parts:
            run_harness(args, report, n, cache, work)
    if "latency" in args.parts:
        run_latency(args, report)
    if "task" in args.parts:
        run_task(args, report, cache, work)
    if "suite" in args.parts:
        run_suite(args, report, cache, work)
    print(json.dumps({k: v for k, v in report.doc.items() if k.endswith(("_per_s", "_raw", "_ms", "wall_s"))}))
    return 0


if __name__ == "__main__":
    sys.exit(cli_evaluate(sys.argv[2:]) if sys.argv[1:2] == ["--as-evaluate"] else main())
