"""The scripted expert (``builtin:expert``) under the native robustness axes, on a fixed set of LIBERO states.

The expert reads the simulator's state, not the images or the instruction: the visual axes (camera, light,
texture, noise) and language must leave its episodes exactly as their control twins; the physical axes
(layout, robot_init) can move its success (docs/robustness.md says which does). One ``evaluate()`` run
plays the control episodes of initial states ``0..states-1`` of each task and, beside them, every (axis,
level) asked for on the same states; the table gives the success rate per (axis, level) with the control's
beside it.

    .venv/bin/python bench/robustness_expert.py --tasks 0 1 2 3 4 --states 2 --workers 2 --update-results
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval_runner.api import EvalSettings, evaluate  # noqa: E402
from rlinf_bench.contracts import CheckpointRef, EvalRun, RunResult  # noqa: E402

RESULTS = REPO / "bench" / "results" / "robustness_expert.json"
#: The physical axes at every level; the visual axes and language at their strongest.
DEFAULT_SPEC = "layout:1,2,3,robot_init:1,2,3,camera:3,light:3,texture:3,noise:3,language:3"


def measure(suite: str, spec: str, tasks: list[int], states: int, workers: int) -> RunResult:
    """One evaluate() run: the expert's control episodes and its perturbed ones on the same states."""
    run = EvalRun.model_validate(
        {
            "request_id": "robustness-expert",
            "checkpoint": CheckpointRef(uri="", experiment="none", global_step=0),
            "suite": suite,
            "run_index": 0,
            "seed": 0,
            "task_ids": tasks,
            "trials_per_task": states,
            "policy": "builtin:expert",
            "workers": workers,
            "robustness": {**_axes(spec), "states": states},
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        return evaluate(run, out_path=Path(tmp) / "r.json", settings=EvalSettings(progress=False))


def _axes(spec: str) -> dict[str, Any]:
    from rlinf_bench.contracts.robustness import parse_robustness_text

    return parse_robustness_text(spec)


def table(result: RunResult) -> list[dict[str, Any]]:
    """One row per (axis, level): successes of the perturbed episodes and of their control twins, how many
    perturbed episodes played exactly as their twin (same success and steps), and the (task, state) pairs
    whose twin succeeded and whose perturbed episode did not (``lost``: ``t<task>-s<state>``)."""
    rows: dict[tuple[str, int, float, str], list[tuple[bool, bool, bool, str]]] = defaultdict(list)
    for task in result.tasks:
        twins = {e.init_state: e for e in task.episodes}
        for episode in task.perturbed:
            p = episode.perturbation
            if p is None:
                continue
            twin = twins[episode.init_state]
            same = (episode.success, episode.steps) == (twin.success, twin.steps)
            cell = f"t{task.task_id}-s{episode.init_state}"
            rows[(p.axis.value, p.level, p.magnitude, p.unit)].append((episode.success, twin.success, same, cell))
    return [
        {
            "axis": axis,
            "level": level,
            "magnitude": f"{magnitude:g} {unit}",
            "episodes": len(cells),
            "success_rate": round(sum(c[0] for c in cells) / len(cells), 3),
            "control_success_rate": round(sum(c[1] for c in cells) / len(cells), 3),
            "same_as_twin": sum(c[2] for c in cells),
            "lost": [c[3] for c in cells if c[1] and not c[0]],
        }
        for (axis, level, magnitude, unit), cells in rows.items()
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--tasks", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--states", type=int, default=4, help="initial states 0..N-1 of every task")
    parser.add_argument("--spec", default=DEFAULT_SPEC, help="the axes and levels (--robustness's form)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--update-results", action="store_true", help=f"write {RESULTS.relative_to(REPO)}")
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = measure(args.suite, args.spec, args.tasks, args.states, args.workers)
    rows = table(result)
    for row in rows:
        print(
            f"{row['axis']:>10} {row['level']} ({row['magnitude']:>12}): SR {row['success_rate']:.0%} vs control "
            f"{row['control_success_rate']:.0%}, {row['same_as_twin']}/{row['episodes']} played as their twin, "
            f"lost {row['lost']}",
            flush=True,
        )
    out = {
        "what": f"builtin:expert under the robustness axes on {args.suite}, tasks {args.tasks}",
        "command": "bench/robustness_expert.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "states": list(range(args.states)),
        "control_success_rate": round(result.success_rate, 3),
        "wall_s": round(time.perf_counter() - t0, 1),
        "rows": rows,
    }
    if args.update_results:
        RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
