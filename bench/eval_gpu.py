"""GPU-scale evaluation on one node: raw LIBERO vs the harness, a 7B policy's latency, a task's wall time.

Runs on a GPU machine (EGL rendering on the GPU) from the repository root. Parts (``--parts``):

- ``raw``: N processes step LIBERO-Spatial task 0 directly (``LiberoEnv``, agentview + wrist cameras
  at 256 px, the zero action), no harness; all start together after warm-up and step for
  ``--raw-seconds``; the aggregate is the sum of each process's steps/s.
- ``harness``: ``rlinf-bench evaluate`` (its parser and runner, without the environment preflight) with N workers and
  ``builtin:zero`` asking for the same two cameras, ``--episodes-per-worker`` episodes of 220 steps;
  its steady-state figure (the workers' stepping phases, resets excluded) against the raw aggregate of the
  same N measured just before it. ``--lockstep N,..`` also runs the old lockstep for comparison.
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

Example (the commands behind bench/results/eval_gpu_h200.json are recorded in it under ``commands``)::

    python3 bench/eval_gpu.py --parts raw,harness --workers 4,8,15 --lockstep 15 --out $OUT/a.json
    python3 bench/eval_gpu.py --parts latency,task --workers 15 --trials 50 --out $OUT/b.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SUITE, TASK, MAX_STEPS, SETTLE = "libero_spatial", 0, 220, 10
CAMERAS = ("agentview", "robot0_eye_in_hand")
RESOLUTION = 256
POLICY_SPEC = "python:bench.llama_policy:make_policy"
ZERO_ACTION = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])


class Report:
    """The result document, rewritten atomically after every figure."""

    def __init__(self, path: Path, argv: list[str], args: argparse.Namespace) -> None:
        self.path = path
        self.doc: dict[str, Any] = {
            "benchmark": "eval_gpu",
            "suite": args.suite,
            "task": TASK,
            "cameras": list(CAMERAS),
            "resolution": args.resolution,  # what this run used, not the default
            "max_steps": args.max_steps,
            "settle_steps": SETTLE,
            "machine": machine(),
            "commands": [shlex.join([Path(sys.executable).name, *argv])],
        }
        self.save()

    def put(self, key: str, sub: str | None, value: Any) -> None:
        if sub is None:
            self.doc[key] = value
        else:
            self.doc.setdefault(key, {})[sub] = value
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=2) + "\n")
        tmp.replace(self.path)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cores": len(os.sched_getaffinity(0)), "cpu": platform.processor() or platform.machine()}
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        info["gpus"] = [line.strip() for line in smi.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError) as exc:
        info["gpus"] = f"nvidia-smi unavailable: {exc}"
    return info


# -- (a) raw aggregate ----------------------------------------------------------------------------
def zero_spec(resolution: int) -> str:
    """``builtin:zero`` asking for the benchmark's cameras (rendered and shipped, then ignored)."""
    return f"builtin:zero?cameras={','.join(CAMERAS)}&resolution={resolution}"


def _raw_process(
    index: int,
    threads: int,
    seconds: float,
    resolution: int,
    cache: str,
    barrier: Any,
    out: Any,
    episodes: bool,
    max_steps: int,
    task: int = TASK,
    physics_once: bool = True,
) -> None:
    from eval_runner.vector import limit_threads

    limit_threads(threads)
    from eval_runner.env import LiberoEnv
    from eval_runner.libero_setup import configure_libero
    from eval_runner.policies.base import ObservationSpec
    from eval_runner.scheduler import RngStart, seeded_state
    from rlinf_bench.suites import get_suite

    configure_libero(Path(cache))
    import torch

    torch.set_num_threads(threads)
    spec = ObservationSpec(cameras=CAMERAS, resolution=resolution, proprio=())
    env = LiberoEnv(get_suite(SUITE).task(task), spec, horizon=100_000)
    env.physics_once = physics_once
    state = index % 50
    seed = 0  # the run seed: the runner seeds every episode's env with it (eval_runner.scheduler.plan_episodes)

    def start(init_state: int) -> None:
        # One hard reset per episode, as the reference loop (seed once, reset per episode): each reset
        # continues this process's own RNG chain instead of replaying the reference's from the seed.
        chain = env.rng_after_reset or seeded_state(seed)
        env.start_episode(init_state, seed, SETTLE, RngStart(seed=seed, base_index=init_state, state=chain))

    start(state)
    for _ in range(10):  # warm-up: the first renders allocate buffers
        env.step(ZERO_ACTION)
    barrier.wait()
    t0 = time.perf_counter()
    steps = 0
    while time.perf_counter() - t0 < seconds:
        if episodes and steps % max_steps == 0:  # the reference loop: a new initial state every max_steps
            state = (state + 1) % 50
            start(state)
        env.step(ZERO_ACTION)
        steps += 1
    elapsed = time.perf_counter() - t0
    out.put((index, steps, elapsed, env.extra_resets))
    env.close()


def raw_aggregate(
    n: int,
    seconds: float,
    threads: int,
    resolution: int,
    cache: Path,
    episodes: bool = False,
    max_steps: int = MAX_STEPS,
    tasks: tuple[int, ...] = (TASK,),
    physics_once: bool = True,
) -> dict[str, Any]:
    """N processes stepping LIBERO with no harness; aggregate steps/s over a common window.

    Process ``i`` steps task ``tasks[i % len(tasks)]`` (the harness over several tasks spreads its workers alike).

    ``episodes``: each process runs whole episodes as the reference loop does (hard reset to the next
    initial state, settle, ``max_steps`` steps), so resets are in the figure; otherwise it only steps.
    ``physics_once``: each sub-step's forward pass computed once, as the harness does (False: robosuite's
    own loop, three passes per sub-step; the same numbers either way, ``eval_runner.physics``).

    Never hangs: a process that dies (or a barrier that never fills) ends the measurement with an error.
    """
    import queue

    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n, timeout=300), ctx.Queue()
    procs = [
        ctx.Process(
            target=_raw_process,
            args=(
                i,
                threads,
                seconds,
                resolution,
                str(cache),
                barrier,
                out,
                episodes,
                max_steps,
                tasks[i % len(tasks)],
                physics_once,
            ),
            daemon=True,
        )
        for i in range(n)
    ]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    rows: list[tuple[int, int, float, int]] = []
    deadline = time.monotonic() + 300 + seconds
    while len(rows) < n:
        try:
            rows.append(out.get(timeout=2))
            continue
        except queue.Empty:
            pass
        dead = [(i, p.exitcode) for i, p in enumerate(procs) if p.exitcode not in (None, 0)]
        if dead or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            why = f"processes died (index, exit code): {dead}" if dead else "timed out"
            return {"processes": n, "error": f"raw measurement failed: {why}; see the log above"}
    for p in procs:
        p.join(timeout=30)
    per = [steps / elapsed for _, steps, elapsed, _ in rows]
    return {
        "processes": n,
        "tasks": list(tasks),
        "mode": "episodes (reset + settle + steps)" if episodes else "stepping only",
        "physics": "each sub-step's forward pass once" if physics_once else "robosuite's loop (three passes)",
        "threads_per_process": threads,
        "seconds": seconds,
        "steps_per_s": round(sum(per), 1),
        "per_process_steps_per_s": [round(x, 1) for x in sorted(per)],
        "extra_resets": sum(extra for *_, extra in rows),  # RNG-replay resets: 0, one reset per episode
        "total_s_with_start": round(time.perf_counter() - t0, 1),
    }


def render_check(resolution: int, cache: Path, steps: int = 30) -> dict[str, Any]:
    """One LiberoEnv with both cameras in this process: does EGL render here, and how fast."""
    from eval_runner.env import LiberoEnv
    from eval_runner.libero_setup import configure_libero
    from eval_runner.policies.base import ObservationSpec
    from rlinf_bench.suites import get_suite

    paths = configure_libero(cache)
    t0 = time.perf_counter()
    env = LiberoEnv(get_suite(SUITE).task(TASK), ObservationSpec(cameras=CAMERAS, resolution=resolution), horizon=999)
    build_s = time.perf_counter() - t0
    obs = env.start_episode(0, 0, SETTLE)
    t1 = time.perf_counter()
    for _ in range(steps):
        obs, _ = env.step(ZERO_ACTION)
    step_ms = 1000 * (time.perf_counter() - t1) / steps
    # A hard reset with a new render context (robosuite's way) against one that keeps it (the runner's):
    # the time of each, and whether every image and the state are the same on this GPU's driver.
    starts: dict[str, Any] = {}
    for mode, reuse in (("new_context", False), ("kept_context", True)):
        env.reuse_render_context = reuse
        times, seen = [], []
        for state in (1, 1, 1):
            t = time.perf_counter()
            first = env.start_episode(state, 0, SETTLE)
            times.append(time.perf_counter() - t)
            after, _ = env.step(np.array([0.5, 0.0, -0.3, 0.0, 0.0, 0.0, 1.0]))
            seen.append((first, after, env.sim.get_state().flatten().copy()))
        starts[mode] = {"start_s": [round(x, 3) for x in times], "seen": seen}
    same = all(
        np.array_equal(a[2], b[2]) and all(np.array_equal(a[i][k], b[i][k]) for i in (0, 1) for k in a[i])
        for a, b in zip(starts["new_context"]["seen"], starts["kept_context"]["seen"], strict=True)
    )
    env.close()
    return {
        "rendering": paths.rendering,
        "build_s": round(build_s, 1),
        "step_ms": round(step_ms, 1),
        "image_mean": round(float(obs["agentview_image"].mean()), 1),
        "start_s_new_context": starts["new_context"]["start_s"],
        "start_s_kept_context": starts["kept_context"]["start_s"],
        "kept_context_bit_identical": same,
    }


# -- (b) the harness ------------------------------------------------------------------------------
def split_cpus(server_cores: int) -> tuple[list[int], list[int]]:
    """(the policy server's cores, the evaluation's cores): the first ``server_cores`` of this process's."""
    cpus = sorted(os.sched_getaffinity(0))
    if not 0 <= server_cores < len(cpus):
        raise SystemExit(f"--server-cores {server_cores}: give 0 to {len(cpus) - 1} of the {len(cpus)} cores here")
    return cpus[:server_cores], cpus[server_cores:]


def _pinned(cpus: list[int] | None) -> Any:
    if not cpus:
        return None
    return lambda: os.sched_setaffinity(0, cpus)  # the child and every worker it spawns stay on these cores


def run_cli(args: list[str], log_path: Path, timeout: float, cpus: list[int] | None = None) -> tuple[int, float]:
    """Run a command with its output in ``log_path``; exit 124 when it outlives ``timeout`` (then killed)."""
    t0 = time.perf_counter()
    with log_path.open("w") as log:
        try:
            rc = subprocess.run(
                args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, timeout=timeout, preexec_fn=_pinned(cpus)
            ).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.perf_counter() - t0


def evaluate_cmd(
    n: int, trials: int, max_steps: int, policy: str, out: Path, cache: Path, extra: list[str], tasks: str = str(TASK)
) -> list[str]:
    # cli_evaluate() below: the evaluate command's own parser, EvalRun and settings, without its doctor
    # preflight (which wants rlinf-bench pip-installed with every extra pinned; the GPU machine runs the tree)
    return [
        sys.executable, str(Path(__file__).resolve()), "--as-evaluate", "--suite", SUITE, "--tasks", tasks, "--trials", str(trials),
        "--max-steps", str(max_steps), "--settle-steps", str(SETTLE), "--workers", str(n), "--policy", policy,
        "--out", str(out), "--cache-dir", str(cache), "--no-progress", *extra,
    ]  # fmt: skip


def harness(
    n: int,
    trials: int,
    max_steps: int,
    resolution: int,
    cache: Path,
    work: Path,
    extra: list[str],
    timeout: float,
    tasks: tuple[int, ...] = (TASK,),
) -> dict[str, Any]:
    """One ``python -m eval_runner`` run over ``tasks`` (``trials`` each); its steady-state and whole-run figures."""
    tag = f"n{n}{'_'.join(['', *extra]).replace('-', '')}"
    out, log = work / f"{tag}.json", work / f"{tag}.log"
    task_ids = ",".join(map(str, tasks))
    cmd = evaluate_cmd(n, trials, max_steps, zero_spec(resolution), out, cache, extra, tasks=task_ids)
    rc, wall = run_cli(cmd, log, timeout)
    row: dict[str, Any] = {
        "command": shlex.join(["rlinf-bench", "evaluate", *cmd[3:]]),
        "exit": rc,
        "wall_s": round(wall, 1),
    }
    if not out.exists():
        return {**row, "error": log.read_text()[-2000:]}
    return {**row, **result_figures(json.loads(out.read_text()))}


def result_figures(result: dict[str, Any]) -> dict[str, Any]:
    tp = result["provenance"]["extra"].get("throughput", {})
    t = result["timings"]
    return {
        "status": result["status"],
        "episodes": result["episodes"],
        "successes": result["successes"],
        "env_steps": t["env_steps"],
        "policy_calls": t["policy_calls"],
        "steady_env_steps_per_s": round(tp.get("steady_env_steps_per_s", 0.0), 1),
        "steady_s": round(tp.get("steady_s_per_vector_step", 0.0) * tp.get("steady_vector_steps", 0), 1),
        "rolling_env_steps_per_s": round(tp.get("rolling_env_steps_per_s", 0.0), 1),
        "rolling_s": round(tp.get("rolling_s", 0.0), 1),
        "mean_batch": round(tp.get("mean_batch", 0.0), 2),
        "chunk_steps": tp.get("chunk_steps", 0),
        "mean_reset_s": round(tp.get("mean_reset_s", 0.0), 2),
        "env_setup_s": t.get("env_setup_s"),
        "harness_overhead": round(tp.get("harness_overhead", 0.0), 4),
        "occupied_env_steps_per_s": round(tp.get("occupied_env_steps_per_s", 0.0), 1),
        "occupied_s": round(tp.get("occupied_s", 0.0), 1),
        "result_wall_s": t["wall_s"],
        "error": result.get("error"),
    }


# -- the 7B policy --------------------------------------------------------------------------------
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


class GpmSampler:
    """The gpu probe's NVML sampler (SM activity through GPM) on a thread, for the length of a run."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self._stop = threading.Event()
        self.result: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> GpmSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            from infra_probes.gpu import load_nvml
            from infra_probes.gpu_nvml import DeviceSampler

            nvml = load_nvml()
            sampler = DeviceSampler(nvml, 0)
            sampler.start()
            while not self._stop.wait(self.interval_s):
                sampler.sample()
            series = sampler.finish()["series"]
            nvml.nvmlShutdown()
            self.result = {
                "gpm_supported": sampler.gpm_supported,
                "samples": len(series.get("util_pct", [])),
                **{f"mean_{k}": round(float(np.mean(v)), 1) for k, v in series.items() if v},
            }
        except Exception as exc:  # no NVML here: the run's figures still count
            self.result = {"error": f"{type(exc).__name__}: {exc}"}


def recompiles_while_serving(server_log: str) -> int:
    """Recompiles Dynamo logged after the server said "serving": each one stalled the model mid-run."""
    _, serving, after = server_log.partition("serving ")
    return after.count("Recompiling function") if serving else 0


def serve(port: int, log_path: Path, spec: str, extra: list[str] | None = None) -> subprocess.Popen[bytes]:
    # `rlinf-bench serve-policy`'s own parser and run(), without the CLI's registry of other commands
    launcher = (
        "import argparse, sys; from eval_runner.policies import serve_cli; p = argparse.ArgumentParser(); "
        "serve_cli.register(p.add_subparsers()); a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))"
    )
    cmd = [sys.executable, "-c", launcher, "serve-policy", "--policy", spec, "--port", str(port), *(extra or [])]
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
    cmd = evaluate_cmd(n, trials, max_steps, client, out, cache, [], tasks)
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


def cli_evaluate(argv: list[str]) -> int:
    """``rlinf-bench evaluate ARGV`` minus the environment preflight: same parser, EvalRun, settings, runner."""
    import logging

    from eval_runner.cli import add_arguments, build_run
    from eval_runner.loop import evaluate
    from eval_runner.settings import EvalSettings

    parser = argparse.ArgumentParser(prog="evaluate")
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = EvalSettings(
        settle_steps=args.settle_steps,
        max_retries=args.max_retries,
        cache_dir=args.cache_dir,
        progress=not args.no_progress,
        worker_threads=args.worker_threads,
        resume=args.resume,
        batch_window_ms=args.batch_window_ms,
        max_batch=args.max_batch,
    )
    run = build_run(args)
    evaluate(run, out_path=run.output_uri, settings=settings, command=["rlinf-bench", "evaluate", *argv])
    return 0


# -- driver ---------------------------------------------------------------------------------------
def results_path(out: Path | None, *, update_results: bool, name: str = "eval_gpu.json") -> Path:
    """Where the figures go: ``out``, or $OUT/``name``, or a temporary file; never into the tracked
    ``bench/results/`` unless ``update_results`` (a smoke run once overwrote the published figures)."""
    if out is None:
        folder = os.environ.get("OUT")
        return Path(folder) / name if folder else Path(tempfile.mkdtemp(prefix="eval-gpu-")) / name
    tracked = (ROOT / "bench" / "results").resolve()
    if not update_results and out.resolve().is_relative_to(tracked):
        raise SystemExit(
            f"--out {out} is inside bench/results/, the published figures: add --update-results to replace them, "
            "or write elsewhere (e.g. --out $OUT/eval_gpu.json) and --combine into it later"
        )
    return out


def main() -> int:
    global SUITE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="raw,harness", help="check,raw,raw_episodes,harness,latency,task,suite")
    parser.add_argument("--workers", default="4,8,15", help="N values (task: the first one)")
    parser.add_argument("--lockstep", default="", help="N values to also run with --batch-window-ms inf")
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
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS, help="policy steps per episode (smoke runs: fewer)")
    parser.add_argument("--resolution", type=int, default=RESOLUTION, help="camera px (smoke runs on a CPU: fewer)")
    parser.add_argument("--work", type=Path, help="folder for the runs' result files and logs (default: a temp dir)")
    parser.add_argument("--timeout", type=float, default=540.0, help="per harness/task run, seconds")
    parser.add_argument("--out", type=Path, help="result file (default: $OUT/eval_gpu.json, else a temporary file)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    parser.add_argument("--suite", default=SUITE, help="LIBERO suite of the suite/task/harness parts")
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
    args = parser.parse_args()
    SUITE = args.suite
    if args.workers == "auto":
        args.workers = str(len(split_cpus(args.server_cores)[1]))
    args.out = results_path(args.out, update_results=args.update_results)
    print(f"results: {args.out}", flush=True)
    if args.combine:
        return combine(args.combine, args.out)
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    report = Report(args.out, sys.argv, args)
    parts = set(args.parts.split(","))
    ns = [int(x) for x in args.workers.split(",") if x]
    lockstep = {int(x) for x in args.lockstep.split(",") if x}
    harness_tasks = tuple(int(x) for x in args.harness_tasks.split(",") if x) or (TASK,)
    cores = len(os.sched_getaffinity(0))
    cache = Path(tempfile.mkdtemp(prefix="eval-gpu-"))
    work = args.work or Path(tempfile.mkdtemp(prefix="eval-gpu-runs-"))
    work.mkdir(parents=True, exist_ok=True)
    if "check" in parts:
        check = render_check(args.resolution, cache)
        report.put("render_check", None, check)
        print(f"render check: {check}", flush=True)
    for n in ns if parts & {"raw", "raw_episodes", "harness"} else []:
        key = str(n)
        for physics in args.raw_physics.split(",") if "raw" in parts else []:
            name = "raw" if physics == "once" else f"raw_{physics}_physics"
            raw = raw_aggregate(
                n, args.raw_seconds, max(1, cores // n), args.resolution, cache, physics_once=physics == "once"
            )
            report.put(name, key, raw)
            report.put(f"{name}_steps_per_s", key, raw.get("steps_per_s"))
            print(f"{name} N={n}: {raw.get('steps_per_s')} steps/s {raw.get('error', '')}", flush=True)
        if "raw_episodes" in parts:
            threads = max(1, cores // n)
            raw = raw_aggregate(
                n, args.raw_episode_seconds, threads, args.resolution, cache, True, args.max_steps, harness_tasks
            )
            report.put("raw_episodes", key, raw)
            report.put("raw_episodes_steps_per_s", key, raw.get("steps_per_s"))
            print(f"raw episodes N={n}: {raw.get('steps_per_s')} steps/s {raw.get('error', '')}", flush=True)
        if "harness" in parts:
            trials = min(50, -(-args.episodes_per_worker * n // len(harness_tasks)))
            modes = [("harness", [])] + ([("harness_lockstep", ["--batch-window-ms", "inf"])] if n in lockstep else [])
            for name, extra in modes:
                row = harness(
                    n, trials, args.max_steps, args.resolution, cache, work, extra, args.timeout, harness_tasks
                )
                report.put(name, key, row)
                report.put(f"{name}_steps_per_s", key, row.get("steady_env_steps_per_s"))
                raw_rate = report.doc.get("raw_steps_per_s", {}).get(key)
                if raw_rate and row.get("steady_env_steps_per_s"):
                    report.put(f"{name}_over_raw", key, round(row["steady_env_steps_per_s"] / raw_rate, 3))
                # like with like: whole episodes with resets on both sides, every worker/process busy
                report.put(f"{name}_occupied_steps_per_s", key, row.get("occupied_env_steps_per_s"))
                raw_episodes = report.doc.get("raw_episodes_steps_per_s", {}).get(key)
                if raw_episodes and row.get("occupied_env_steps_per_s"):
                    ratio = round(row["occupied_env_steps_per_s"] / raw_episodes, 3)
                    report.put(f"{name}_occupied_over_raw_episodes", key, ratio)
                print(f"{name} N={n}: {row.get('steady_env_steps_per_s')} steps/s (exit {row['exit']})", flush=True)
    if "latency" in parts:
        try:
            lat = policy_latency([int(b) for b in args.batches.split(",")], args.iters)
        except Exception as exc:  # keep going: the task part serves the policy in its own process
            lat = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"latency failed: {lat['error']}", flush=True)
        report.put("policy", None, {k: v for k, v in lat.items() if not k.isdigit()})
        report.put("policy_latency_ms", None, {k: v for k, v in lat.items() if k.isdigit()})
    for chunks in args.chunks.split(",") if "task" in parts else []:
        key = "task_7b" if chunks == "runner" else f"task_7b_chunks_{chunks}"
        task = served_run(args, ns[0], cache, work, chunks=chunks, tag=key)
        report.put(key, None, task)
        print(f"task x {args.trials} trials, N={ns[0]}, 7B served, chunks={chunks}: {task.get('wall_s')} s", flush=True)
        if chunks == "runner" and "rolling_s" in task and args.trials == 50 and args.max_steps == MAX_STEPS:
            projection = project_suite(task)
            report.put("suite_projection", None, projection)
            if "suite_wall_measured" not in report.doc:
                report.put("suite_wall_s", None, projection["suite_wall_s"])
                report.put("suite_wall_measured", None, False)
    if "suite" in parts:
        suite = served_run(args, ns[0], cache, work, tasks=",".join(map(str, range(10))), tag="suite_7b")
        report.put("suite_7b", None, suite)
        print(f"suite x {args.trials} trials, N={ns[0]}, 7B served: {suite.get('wall_s')} s", flush=True)
        if suite.get("status") == "complete":
            report.put("suite_wall_s", None, suite["wall_s"])
            report.put("suite_wall_measured", None, True)
    print(json.dumps({k: v for k, v in report.doc.items() if k.endswith(("_per_s", "_raw", "_ms", "wall_s"))}))
    return 0


def combine(files: list[Path], out: Path) -> int:
    doc: dict[str, Any] = {}
    for f in files:
        part = json.loads(f.read_text())
        for key, value in part.items():
            if key == "commands":
                doc.setdefault("commands", []).extend(value)
            elif isinstance(value, dict) and isinstance(doc.get(key), dict) and key != "machine":
                doc[key].update(value)
            else:
                doc[key] = value
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"combined {len(files)} files into {out}")
    return 0


if __name__ == "__main__":
    sys.exit(cli_evaluate(sys.argv[2:]) if sys.argv[1:2] == ["--as-evaluate"] else main())
