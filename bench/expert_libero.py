"""Success of ``builtin:expert`` (a scripted expert with simulator access, not a learned policy) on LIBERO.

Runs the real ``evaluate()`` (OFT protocol by default: 220 steps for LIBERO-Spatial, 280 for LIBERO-Object)
at each noise level over initial states ``0..states-1`` of every task, and reports the success rate per
task and overall. ``--update-results`` replaces this suite's record in the results file and keeps the
other suites' records.

    .venv/bin/python bench/expert_libero.py --states 5 --noise 0 0.5 1.5 --update-results
    .venv/bin/python bench/expert_libero.py --suite libero_object --states 10 --noise 0 --update-results
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval_runner.api import EvalSettings, evaluate, load_policy  # noqa: E402
from rlinf_bench.contracts import CheckpointRef, EvalRun  # noqa: E402

RESULTS = REPO / "bench" / "results" / "expert_libero.json"


def measure(
    suite: str,
    noise: float,
    states: int,
    workers: int,
    tasks: list[int] | None,
    protocol: Literal["oft", "rlinf"],
    max_steps: int | None = None,
) -> dict[str, Any]:
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
        protocol=protocol,
        max_steps=max_steps,
    )
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = evaluate(run, out_path=Path(tmp) / "r.json", settings=EvalSettings(progress=False))
    return {
        "noise": noise,
        "policy": run.policy,
        "max_steps": result.max_steps,
        "settle_steps": result.settle_steps,
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
    parser.add_argument("--protocol", choices=("oft", "rlinf"), default="oft", help="episode settings (horizon)")
    parser.add_argument("--max-steps", type=int, default=None, help="a shorter horizon than the protocol's")
    parser.add_argument("--update-results", action="store_true", help=f"write {RESULTS.relative_to(REPO)}")
    args = parser.parse_args()
    levels = []
    for noise in args.noise:
        levels.append(measure(args.suite, noise, args.states, args.workers, args.tasks, args.protocol, args.max_steps))
        print(
            f"noise={noise}: {levels[-1]['successes']}/{levels[-1]['episodes']} ({levels[-1]['wall_s']} s)", flush=True
        )
    record = {
        "what": f"builtin:expert, a {expert_kind()}, on {args.suite} ({args.protocol} protocol horizon)",
        "command": "bench/expert_libero.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "protocol": args.protocol,
        "states": list(range(args.states)),
        "levels": levels,
    }
    if args.update_results:
        RESULTS.write_text(json.dumps(with_suite(read_results(), args.suite, record), indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


def read_results() -> dict[str, Any]:
    """The results file: one record per suite under ``suites`` (an empty one when there is no file yet)."""
    if not RESULTS.exists():
        return {"suites": {}}
    doc: dict[str, Any] = json.loads(RESULTS.read_text())
    return doc


def with_suite(doc: dict[str, Any], suite: str, record: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with ``suite``'s record replaced by ``record`` and every other suite's kept, suites in name order."""
    suites = {**doc.get("suites", {}), suite: record}
    return {**doc, "suites": dict(sorted(suites.items()))}


if __name__ == "__main__":
    sys.exit(main())
