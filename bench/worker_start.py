"""What a LIBERO worker process costs before its first observation: wall time, CPU time and peak memory.

Every evaluation spawns its workers fresh (``spawn``: a CUDA parent cannot fork safely), and each one imports
the simulator, builds its task's scene and resets it before the policy sees anything. On the H200 the first
wave's start-up is ~12 s of a ~290 s suite (issue 25), and the second wave starts beside stepping workers.

This bench starts ``--workers`` real workers (``eval_runner.api.worker_main``) at once, sends each the
start of one episode (task ``i mod 10``, initial state 0, 10 settle steps, both cameras), and records per
worker the time from the spawn to its first observation, its CPU time and its peak resident memory then.
Each worker then starts ``--starts`` more episodes of its task (states 1, 2, ... from the RNG state the
previous reset left, as the scheduler hands them out): a reset, the initial state, the settle steps and the
observation's render, which every episode pays. It runs three variants in turns, ``--rounds`` times each:

- ``as-built``: the worker as it is;
- ``with-torch``: the same worker importing torch first, as every worker did until LIBERO's initial states
  were read without it (``eval_runner/init_states.py``). The difference is what that import cost;
- ``without-gc-freeze``: the same worker with ``gc.freeze`` made a no-op in its process, so robosuite's
  ``gc.collect()`` at every reset walks the imports' objects too.

``--first-wave`` measures instead what a worker left waiting does. Episodes of one task form a chain: each
reset starts from the RNG state the previous one left (eval_runner/scheduler.py), so of ``--workers``
workers started on one task, all but the first wait for a reset before theirs, and build the task's scene
meanwhile. It runs ``rlinf-bench evaluate`` (the library call, without the doctor preflight) on task 0 with
two 8-step episodes per worker, ``--rounds`` times, and records the run's wall time, each episode's wall
time and the scenes built while waiting. (Building each scene at its episode's start instead took
1.33-1.36 times as long on 2 cores: bench/results/worker_first_wave_cpu.json, before that way was removed.)

Run: ``.venv/bin/python bench/worker_start.py [--workers 2] [--rounds 3] [--first-wave]``; writes
``bench/results/worker_start_cpu.json`` with ``--update-results`` (else ``--out``, ``$OUT`` or a temporary file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import machine, results_path  # noqa: E402
from eval_runner.api import (  # noqa: E402
    EpisodeTask,
    ObservationSpec,
    RngStart,
    WorkerConfig,
    WorkerHandle,
    close_all,
    configure_libero,
    limit_threads,
    worker_main,
)

CAMERAS = ("agentview", "robot0_eye_in_hand")
SETTLE_STEPS = 10
VARIANTS = ("as-built", "with-torch", "without-gc-freeze")


def worker_with_torch(conn: Connection, config: WorkerConfig) -> None:  # pragma: no cover - runs in the child
    """The worker as it was before: torch imported (and its threads capped) before anything else."""
    limit_threads(config.threads)
    import torch

    torch.set_num_threads(config.threads)
    worker_main(conn, config)


def process_figures(pid: int) -> tuple[float, float, bool]:
    """(CPU seconds used so far, peak resident MiB, whether torch's library is loaded) of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu_s = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    peak_kib = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmHWM")
    )
    torch_loaded = "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    return cpu_s, peak_kib / 1024, torch_loaded


def worker_without_gc_freeze(conn: Connection, config: WorkerConfig) -> None:  # pragma: no cover - in the child
    """The worker as it was before: every reset's full collection walks the imports' objects too."""
    import gc

    gc.freeze = lambda: None  # the worker's freeze of its imports' objects, undone in this process only
    worker_main(conn, config)


TARGETS = {"as-built": worker_main, "with-torch": worker_with_torch, "without-gc-freeze": worker_without_gc_freeze}


def start_workers(variant: str, workers: int, config: WorkerConfig, starts: int) -> dict[str, Any]:
    """Spawn ``workers`` at once and time each one's first observation, then ``starts`` more episode starts.

    Worker ``i`` runs task ``i mod 10`` from initial state 0, then states 1, 2, ... of the same task, each
    from the RNG state the previous reset left (as the scheduler hands them out), so no reset is replayed.
    """
    t0 = time.perf_counter()
    handles = [WorkerHandle(i, config, target=TARGETS[variant]) for i in range(workers)]
    sent: dict[int, float] = {}
    for i, handle in enumerate(handles):
        handle.send(("start", EpisodeTask(task_id=i % 10, init_state=0, seed=7), SETTLE_STEPS))
        sent[i] = time.perf_counter()
    first_obs: dict[int, float] = {}
    cpu: dict[int, float] = {}
    peak: dict[int, float] = {}
    setup: dict[int, float] = {}
    torch_loaded: dict[int, bool] = {}
    later_starts: list[float] = []
    done: dict[int, int] = {i: 0 for i in range(workers)}
    try:
        waiting = {h.conn: h for h in handles if h.conn is not None}
        while waiting:
            for conn in wait(list(waiting)):
                handle = waiting.pop(conn)  # type: ignore[call-overload]
                i = handle.index
                assert handle.conn is not None
                reply = handle.recv()
                now = time.perf_counter()
                if done[i] == 0:
                    first_obs[i] = now - t0
                    cpu[i], peak[i], torch_loaded[i] = process_figures(handle.process.pid)
                    setup[i] = float(reply[2]["setup_s"])
                else:
                    later_starts.append(now - sent[i])
                done[i] += 1
                if done[i] <= starts:
                    rng = RngStart(seed=7, base_index=done[i], state=reply[2]["rng_after_reset"])
                    handle.send(
                        ("start", EpisodeTask(task_id=i % 10, init_state=done[i], seed=7, rng=rng), SETTLE_STEPS)
                    )
                    sent[i] = time.perf_counter()
                    waiting[handle.conn] = handle
    finally:
        close_all(handles)
    order = sorted(first_obs)
    return {
        "variant": variant,
        "workers": workers,
        "first_obs_s": [round(first_obs[i], 3) for i in order],
        "last_first_obs_s": round(max(first_obs.values()), 3),
        "cpu_s_per_worker": round(statistics.fmean(cpu.values()), 3),
        "peak_rss_mib_per_worker": round(statistics.fmean(peak.values()), 1),
        "scene_build_s": round(statistics.fmean(setup.values()), 3),
        "workers_with_torch_loaded": sum(torch_loaded.values()),
        "episode_starts": len(later_starts),
        "mean_episode_start_s": round(statistics.fmean(later_starts), 4) if later_starts else None,
    }


def first_wave(workers: int, resolution: int, suite: str, work: Path) -> dict[str, Any]:
    """One evaluate run of task 0, two short episodes per worker; its wall time and episode times."""
    from eval_runner.api import evaluate, parse_evaluate_args

    out = work / "first_wave.json"
    out.unlink(missing_ok=True)
    policy = f"builtin:zero?cameras={','.join(CAMERAS)}&resolution={resolution}"
    argv = ["--suite", suite, "--tasks", "0", "--trials", str(2 * workers), "--max-steps", "8"]
    argv += ["--settle-steps", str(SETTLE_STEPS), "--workers", str(workers), "--policy", policy, "--out", str(out)]
    run, settings = parse_evaluate_args([*argv, "--no-progress"])
    t0 = time.perf_counter()
    result = evaluate(run, out_path=out, settings=settings, command=["rlinf-bench", "evaluate", *argv])
    wall = time.perf_counter() - t0
    episodes = [e for task in result.tasks for e in task.episodes]
    return {
        "workers": workers,
        "wall_s": round(wall, 3),
        "episode_wall_s": [e.wall_s for e in sorted(episodes, key=lambda e: e.init_state)],
        "outcomes": [(e.init_state, e.success, e.steps) for e in sorted(episodes, key=lambda e: e.init_state)],
        "scenes_prepared": result.provenance.extra.get("throughput", {}).get("scenes_prepared"),
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per variant: each round's figures; per round, as-built over each earlier variant."""
    by_variant = {v: [r for r in runs if r["variant"] == v] for v in VARIANTS}
    torch_pairs = list(zip(by_variant["as-built"], by_variant["with-torch"], strict=True))
    gc_pairs = list(zip(by_variant["as-built"], by_variant["without-gc-freeze"], strict=True))

    def per_variant(key: str) -> dict[str, list[Any]]:
        return {v: [r[key] for r in rs] for v, rs in by_variant.items()}

    def ratios(pairs: list[tuple[dict[str, Any], dict[str, Any]]], key: str) -> list[float]:
        return [round(a[key] / b[key], 3) for a, b in pairs if a[key] and b[key]]

    return {
        "last_first_obs_s": per_variant("last_first_obs_s"),
        "cpu_s_per_worker": per_variant("cpu_s_per_worker"),
        "peak_rss_mib_per_worker": per_variant("peak_rss_mib_per_worker"),
        "mean_episode_start_s": per_variant("mean_episode_start_s"),
        "as_built_over_with_torch": {
            "last_first_obs": ratios(torch_pairs, "last_first_obs_s"),
            "cpu_s": ratios(torch_pairs, "cpu_s_per_worker"),
            "peak_rss": ratios(torch_pairs, "peak_rss_mib_per_worker"),
        },
        "as_built_over_without_gc_freeze": {
            "mean_episode_start": ratios(gc_pairs, "mean_episode_start_s"),
            "peak_rss": ratios(gc_pairs, "peak_rss_mib_per_worker"),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)), help="workers started at once")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each variant, in turns")
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--resolution", type=int, default=256, help="camera side in pixels")
    parser.add_argument("--starts", type=int, default=6, help="episode starts after the first, per worker")
    parser.add_argument("--first-wave", action="store_true", help="measure scene builds while waiting instead")
    parser.add_argument("--out", type=Path, help="result file (default: $OUT or a temporary file)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    args = parser.parse_args()
    name = "worker_first_wave.json" if args.first_wave else "worker_start.json"
    out = results_path(args.out, update_results=args.update_results, name=name)
    if args.first_wave:
        return main_first_wave(args, out)
    configure_libero(None, needs_renderer=True)  # the parent's environment (MUJOCO_GL, LIBERO config) is inherited
    config = WorkerConfig(
        suite=args.suite, obs_spec=ObservationSpec(cameras=CAMERAS, resolution=args.resolution), horizon=220
    )
    runs: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for variant in VARIANTS:
            row = start_workers(variant, args.workers, config, args.starts)
            runs.append(row)
            print(json.dumps(row), flush=True)
    doc = {
        "benchmark": "worker_start",
        **run_header(),
        "bytecode_written": not sys.dont_write_bytecode,
        "settings": {
            "suite": args.suite,
            "resolution": args.resolution,
            "settle_steps": SETTLE_STEPS,
            "starts_after_the_first": args.starts,
        },
        "summary": summarize(runs),
        "runs": runs,
    }
    return save(out, doc)


def main_first_wave(args: argparse.Namespace, out: Path) -> int:
    """``--first-wave``: :func:`first_wave` ``--rounds`` times; every round must run the same episodes."""
    import tempfile

    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="first-wave-") as work:
        for _ in range(args.rounds):
            row = first_wave(args.workers, args.resolution, args.suite, Path(work))
            runs.append(row)
            print(json.dumps(row), flush=True)
    if any(r["outcomes"] != runs[0]["outcomes"] for r in runs):
        raise SystemExit("the rounds ran different episodes: see the outcomes above")
    doc = {
        "benchmark": "worker_first_wave",
        **run_header(),
        "settings": {"suite": args.suite, "resolution": args.resolution, "settle_steps": SETTLE_STEPS},
        "summary": {
            "wall_s": [r["wall_s"] for r in runs],
            "scenes_prepared": [r["scenes_prepared"] for r in runs],
        },
        "runs": runs,
    }
    return save(out, doc)


def run_header() -> dict[str, Any]:
    """What every result document of this bench starts with: the machine and the command that made it."""
    return {"machine": machine(), "command": " ".join([Path(sys.executable).name, *sys.argv])}


def save(out: Path, doc: dict[str, Any]) -> int:
    """Write the result document, print its summary and where it went."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["summary"], indent=1))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
