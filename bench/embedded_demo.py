"""Wall time of ``rlinf-bench demo`` (what ``make demo`` runs after set-up), on this machine.

Runs the command as a user would, in a fresh folder, and records the wall time with the machine's
load (the 1-min load average before, after, and sampled every 5 s while it ran: other work on the same cores
stretches the wall time) and the CPU seconds its process tree used (cpu_s / cores is about what the wall time
would be with the cores to itself), and what the demo showed: each step's success rate, step 200's verdict
against step 100 and its flipped states. The docs quote this file's wall time, with its machine and load.

    .venv/bin/python bench/embedded_demo.py [--runs 1 --trials 3 --max-steps 130] [--keep DIR]
Writes bench/results/embedded_demo.json (--keep: the demo's folder is DIR and stays, e.g. to run it again).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rlinf_bench.contracts import CheckpointReport  # noqa: E402
from rlinf_local.demo_command import DEMO_BUDGET, DEMO_POLICY, DEMO_STEPS, DEMO_TASKS  # noqa: E402

OUT = ROOT / "bench" / "results" / "embedded_demo.json"
GOAL_S = 300.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=DEMO_BUDGET["runs"])
    parser.add_argument("--trials", type=int, default=DEMO_BUDGET["trials"])
    parser.add_argument("--max-steps", type=int, default=DEMO_BUDGET["max_steps"])
    parser.add_argument("--keep", type=Path, help="run the demo in this folder and keep it (default: a temp folder)")
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("rlinf-bench")
    # Kept when the demo fails, so its Job logs and state can be read.
    tmp = str(args.keep.resolve()) if args.keep else tempfile.mkdtemp(prefix="rlinf-demo-bench-")
    cmd = [str(exe), "demo", "--out", tmp, "--json", "--runs", str(args.runs), "--trials", str(args.trials)]
    cmd += ["--max-steps", str(args.max_steps)]
    load_before = os.getloadavg()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    samples: list[float] = []
    done = threading.Event()

    def sample_load() -> None:
        while not done.wait(5.0):
            samples.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample_load, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    # CPU seconds the demo's process tree used: on an otherwise idle machine, cpu_s / cores bounds the wall time.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = usage.ru_utime + usage.ru_stime
    load_after = os.getloadavg()
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(proc.stderr[-3000:], file=sys.stderr)
        return 1
    result = {
        "wall_s": round(wall, 1),
        "goal_s": GOAL_S,
        "met": wall <= GOAL_S,
        "exit_status": proc.returncode,
        "executions": [
            {"name": e["name"], "status": e["status"], "runs_done": e["runs_done"]} for e in doc["executions"]
        ],
        "failures": doc["failures"],
        "budget": {
            "checkpoints": 2,
            "suite": "libero_spatial",
            "tasks": list(DEMO_TASKS),
            **{k: getattr(args, k) for k in ("runs", "trials", "max_steps")},
            "workers": 2,
        },
        "policy": {str(step): f"{DEMO_POLICY} (scripted expert, noise {noise})" for step, noise in DEMO_STEPS},
        "shown": shown(Path(tmp), [e["name"] for e in doc["executions"]]),
        "cpu_s": round(cpu_s, 1),
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_1m_before": load_before[0],
            "loadavg_1m_after": load_after[0],
            # Above the core count, other processes share the cores: the wall time is stretched by about
            # load / cores when that exceeds 1.
            "loadavg_1m_mean_during": round(sum(samples) / len(samples), 2) if samples else None,
            "loadavg_1m_max_during": round(max(samples), 2) if samples else None,
        },
        "started_at": started,
        # The demo's folder is left out: a machine path says nothing about the figure.
        "command": f"python bench/embedded_demo.py --runs {args.runs} --trials {args.trials} --max-steps {args.max_steps}",
    }
    if proc.returncode == 0 and not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    elif proc.returncode != 0:
        result["kept"] = tmp
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if proc.returncode == 0 else 1


def shown(out: Path, names: list[str]) -> dict[str, object]:
    """What the demo showed: success rate per step, the last step's verdicts and its flipped states."""
    reports = [CheckpointReport.load(p) for n in names if (p := out / "reports" / f"{n}.json").exists()]
    if not reports:
        return {}
    last = reports[-1].suites[0]
    return {
        "success_rate": {str(r.global_step): round(r.suites[0].success_rate_mean or 0.0, 3) for r in reports},
        "verdicts": {v.against: v.value.value for v in last.verdicts},
        "flips": [f"task {f.task_id} state {f.init_state} {f.direction}" for f in last.flips],
    }


if __name__ == "__main__":
    sys.exit(main())
