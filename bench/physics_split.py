"""What a LIBERO control step costs with robosuite's loop and with each sub-step's forward pass computed once.

One ``LiberoEnv`` per task in this process, no cameras (the physics alone), the protocol's settle and a
random arm motion with the gripper opening and closing; the two ways alternate every block of steps so
that the machine's drift falls on both alike. It also checks on the way that both give the same state
after every step (the sim tests do so exhaustively; here it guards the figure).

Run: ``.venv/bin/python bench/physics_split.py [--tasks 0,4,9] [--steps 200] [--out FILE]``; by default it
writes nothing into ``bench/results`` (``--update-results`` writes ``bench/results/physics_split_cpu.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval_runner.api import limit_threads  # noqa: E402

SUITE = "libero_spatial"
TRACKED = ROOT / "bench" / "results" / "physics_split_cpu.json"


def _state(env: Any) -> np.ndarray:
    return np.asarray(env.sim.get_state().flatten())


def measure_task(task_id: int, steps: int, block: int) -> dict[str, Any]:
    """Per-step wall time of ``LiberoEnv.step`` both ways, on twin envs started from the same episode."""
    from eval_runner.api import LiberoEnv, ObservationSpec
    from rlinf_bench.suites import get_suite

    task = get_suite(SUITE).task(task_id)
    envs = {way: LiberoEnv(task, ObservationSpec(cameras=()), horizon=steps) for way in ("stock", "once")}
    envs["stock"].physics_once = False
    rng = np.random.default_rng(task_id)
    times: dict[str, list[float]] = {"stock": [], "once": []}
    try:
        for env in envs.values():
            env.start_episode(0, seed=0, settle_steps=10)
        for start in range(0, steps, block):
            actions = np.clip(rng.normal(0.0, 0.5, (block, 7)), -1.0, 1.0)
            actions[:, 6] = 1.0 if (start // block) % 2 else -1.0
            for way in ("stock", "once") if (start // block) % 2 == 0 else ("once", "stock"):
                t0 = time.perf_counter()
                for action in actions:
                    envs[way].step(action)
                times[way].append((time.perf_counter() - t0) / block)
            if not np.array_equal(_state(envs["stock"]), _state(envs["once"])):
                raise SystemExit(f"task {task_id}: the two ways diverged by step {start + block} (a bug: report it)")
        counters = envs["once"].physics_counters
    finally:
        for env in envs.values():
            env.close()
    stock_ms, once_ms = (float(np.median(times[w])) * 1000 for w in ("stock", "once"))
    return {
        "task": task_id,
        "steps": steps,
        "stock_ms_per_step": round(stock_ms, 3),
        "once_ms_per_step": round(once_ms, 3),
        "once_over_stock": round(once_ms / stock_ms, 3),
        "forwards_skipped": counters.forwards_skipped,
        "split_steps": counters.split_steps,
        "full_steps": counters.full_steps,
        "states_equal_after_every_block": True,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="0,4,9")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--block", type=int, default=20, help="steps per alternation")
    parser.add_argument("--out", type=Path, help="result file (default: print only)")
    parser.add_argument("--update-results", action="store_true", help=f"write {TRACKED.relative_to(ROOT)}")
    args = parser.parse_args()
    out = TRACKED if args.update_results else args.out
    if out is not None and out.resolve() == TRACKED.resolve() and not args.update_results:
        raise SystemExit(f"--out {out} is the published figure: add --update-results to replace it")
    limit_threads(1)  # as a worker: one core each
    from eval_runner.api import configure_libero

    configure_libero(None, needs_renderer=False)
    load_before = os.getloadavg()[0]
    rows = [measure_task(int(t), args.steps, args.block) for t in args.tasks.split(",")]
    for row in rows:
        print(
            f"task {row['task']}: stock {row['stock_ms_per_step']} ms, once {row['once_ms_per_step']} ms "
            f"per step ({row['once_over_stock']} of stock)",
            flush=True,
        )
    doc = {
        "benchmark": "physics_split",
        "command": " ".join([".venv/bin/python", "bench/physics_split.py", *sys.argv[1:]]),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "suite": SUITE,
        "cameras": "none (physics only)",
        "tasks": rows,
    }
    if out is not None:
        out.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
