"""Success of ``builtin:expert`` (a scripted expert with simulator access, not a learned policy) on LIBERO.

Runs the real ``evaluate()`` (OFT protocol: 220 steps for LIBERO-Spatial) at each noise level over
initial states ``0..states-1`` of every task, and reports the success rate per task and overall.

    .venv/bin/python bench/expert_libero.py --states 5 --noise 0 0.2 0.5 1.5 --update-results
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval_runner.api import EvalSettings, evaluate, load_policy  # noqa: E402
from rlinf_bench.contracts import CheckpointRef, EvalRun  # noqa: E402

RESULTS = REPO / "bench" / "results" / "expert_libero.json"


def measure(suite: str, noise: float, states: int, workers: int, tasks: list[int] | None) -> dict[str, Any]:
    """One evaluate() run of the expert at ``noise``; per-task success and wall time."""
    run = EvalRun(
        request_id="expert-bench",
        checkpoint=CheckpointRef(uri="", experiment="none", global_step=0),
        suite=suite,
        run_index=0,
        seed=0,
        task_ids=tasks,
        trials_per_task=states,
        policy=f"builtin:expert?noise={noise}",
        workers=workers,
    )
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = evaluate(run, out_path=Path(tmp) / "r.json", settings=EvalSettings(progress=False))
    return {
        "noise": noise,
        "policy": run.policy,
        "max_steps": result.max_steps,
        "episodes": result.episodes,
        "successes": result.successes,
        "success_rate": round(result.success_rate, 4),
        "wall_s": round(time.perf_counter() - t0, 1),
        "per_task": {
            str(t.task_id): {
                "successes": t.successes,
                "episodes": len(t.episodes),
                "failed_states": [e.init_state for e in t.episodes if not e.success],
                "mean_steps_success": round(sum(e.steps for e in t.episodes if e.success) / max(1, t.successes), 1),
            }
            for t in result.tasks
        },
    }


def expert_kind() -> str:
    """What ``builtin:expert`` says it is (its ``describe()``): a scripted expert, not a learned policy."""
    return str(load_policy("builtin:expert", None).describe()["kind"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--states", type=int, default=5, help="initial states 0..N-1 of every task")
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.2, 0.5, 1.5])
    parser.add_argument("--tasks", type=int, nargs="*", default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--update-results", action="store_true", help=f"write {RESULTS.relative_to(REPO)}")
    args = parser.parse_args()
    levels = [measure(args.suite, n, args.states, args.workers, args.tasks) for n in args.noise]
    for level in levels:
        print(f"noise={level['noise']}: {level['successes']}/{level['episodes']} ({level['wall_s']} s)", flush=True)
    out = {
        "what": f"builtin:expert, a {expert_kind()}, on {args.suite} (OFT protocol horizon)",
        "command": "bench/expert_libero.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "states": list(range(args.states)),
        "levels": levels,
    }
    if args.update_results:
        RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
