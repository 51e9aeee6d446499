"""Every LIBERO suite's measured wall time on one GPU, and the time per checkpoint that follows from them.

Folds the result files of ``bench/suite_lease.sh`` (``bench/eval_gpu.py --parts suite``: one whole suite-run,
500 episodes to the suite's horizon, the 7B stand-in served) into ``bench/results/gpu_suites.json``::

    {"suites": {SUITE: {"wall_s": [...], "episodes", "max_steps", "workers", "card", "lease", "runs": [...]}},
     "per_checkpoint": {...}}

A suite's ``wall_s`` lists every measured run; ``runs`` keeps each run's card, lease, workers and rates, so
figures from different cards or settings are never averaged without their labels. ``per_checkpoint`` is the
brief's protocol (every LIBERO suite of the default matrix x 3 runs) on one GPU: the sum of the measured
suite-runs, to the horizon (the stand-in never succeeds, so no episode ends early), with the early-ending
effect of a policy that succeeds stated beside it from ``bench/results/expert_libero.json`` (measured steps
of a scripted expert), never folded into the measured figure.

    .venv/bin/python bench/gpu_suites.py --add /tmp/gpu49/suite_*_A.json \\
        --lease "nvidia-h100-x1, 2026-12-06 04:16-04:39 UTC (device clock), one lease" --update-results
    .venv/bin/python bench/gpu_suites.py           # print the table from the tracked file
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import results_path  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "gpu_suites.json"
EXPERT = ROOT / "bench" / "results" / "expert_libero.json"
PEERS = ROOT / "bench" / "results" / "gpu_peers_h200.json"
#: the brief's protocol: three runs of each suite per checkpoint
RUNS_PER_SUITE = 3
#: the suites of the default eval matrix (LIBERO's four; libero_90 is opt-in)
PROTOCOL_SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")
#: RLinf's own evaluation horizons, beside the OpenVLA-OFT ones measured here (rlinf_bench/protocols.py)
RLINF_MAX_STEPS = {"libero_spatial": 512, "libero_object": 512, "libero_goal": 512, "libero_10": 520, "libero_90": 512}


def run_record(doc: dict[str, Any], lease: str) -> dict[str, Any]:
    """One suite-run from an ``eval_gpu.py --parts suite`` result file, with what it ran on."""
    run = doc.get("suite_7b")
    if not run or run.get("status") != "complete":
        raise SystemExit(f"{doc.get('suite')}: the suite-run did not complete ({(run or {}).get('error')}): not added")
    gpus = doc.get("machine", {}).get("gpus") or ["unknown"]
    server = run.get("server", {})
    return {
        "wall_s": run["wall_s"],
        "card": gpus[0].split(",")[0] if isinstance(gpus, list) else str(gpus),
        "lease": lease,
        "workers": int(_flag(run["command"], "--workers")),
        "cores": doc.get("machine", {}).get("cores"),
        "server_cpus": run.get("server_cpus"),
        "episodes": run["episodes"],
        "env_steps": run["env_steps"],
        "max_steps": doc["max_steps"],
        "server_start_s": run.get("server_start_s"),
        "steady_env_steps_per_s": run.get("steady_env_steps_per_s"),
        "occupied_env_steps_per_s": run.get("occupied_env_steps_per_s"),
        "model_busy": server.get("model_busy"),
        "ms_per_row": server.get("ms_per_row"),
        "mean_rows_per_call": server.get("mean_rows_per_call"),
        "sm_active_pct": run.get("gpu", {}).get("mean_sm_active_pct"),
        "gpu_memory_used_gb": run.get("gpu", {}).get("mean_memory_used_gb"),
        "server_recompiles": run.get("server_recompiles"),
        "command": run["command"],
        "server_command": run.get("server_command"),
    }


def spatial_headline() -> list[dict[str, Any]]:
    """LIBERO-Spatial's two suite-runs with the same settings, measured earlier on an H200 (gpu_peers_h200.json)."""
    doc = json.loads(PEERS.read_text())
    ours = doc["rlinf_bench"]
    return [
        {
            "wall_s": wall,
            "card": doc["machine"]["gpus"][0].split(",")[0],
            "lease": doc["lease"],
            "workers": ours["settings"]["workers"],
            "cores": doc["machine"]["cores"],
            "server_cpus": ours["settings"]["server_cpus"],
            "episodes": doc["episodes"],
            "env_steps": doc["episodes"] * doc["max_steps"],
            "max_steps": doc["max_steps"],
            "server_start_s": ours["server_start_s"][i],
            "steady_env_steps_per_s": ours["steady_env_steps_per_s"][i],
            "occupied_env_steps_per_s": ours["occupied_env_steps_per_s"][i],
            "model_busy": ours["model_busy"][i],
            "ms_per_row": ours["ms_per_row"][i],
            "mean_rows_per_call": ours["mean_rows_per_call"][i],
            "sm_active_pct": ours["sm_activity"][i],
            "server_recompiles": ours["server_recompiles"][i],
            "command": ours["evaluate_command"],
            "server_command": ours["server_command"],
            "source": f"bench/results/{PEERS.name} rlinf_bench",
        }
        for i, wall in enumerate(ours["wall_s"])
    ]


def _flag(command: str, name: str) -> str:
    words = command.split()
    return words[words.index(name) + 1]


def add_runs(doc: dict[str, Any], files: list[Path], lease: str) -> None:
    """Append each file's suite-run to its suite, then recompute the suite's summary fields."""
    suites = doc.setdefault("suites", {})
    if "libero_spatial" not in suites:
        suites["libero_spatial"] = {"runs": spatial_headline()}
    for path in files:
        part = json.loads(path.read_text())
        suite = suites.setdefault(part["suite"], {"runs": []})
        suite["runs"].append(run_record(part, lease))
    for entry in suites.values():
        summarize_suite(entry)


def summarize_suite(entry: dict[str, Any]) -> None:
    """The fields the issue names, from the runs: every wall time, and the settings when the runs share them."""
    runs = entry["runs"]
    entry["wall_s"] = [r["wall_s"] for r in runs]
    for key in ("episodes", "max_steps", "workers", "card", "lease"):
        values = sorted({str(r[key]) for r in runs})
        entry[key] = runs[0][key] if len(values) == 1 else values


def per_checkpoint(suites: dict[str, Any]) -> dict[str, Any]:
    """The protocol's GPU time on one GPU: measured suite-runs summed, x 3 runs; the missing suites named."""
    measured = {s: suites[s]["wall_s"] for s in PROTOCOL_SUITES if s in suites and suites[s].get("wall_s")}
    low = sum(min(v) for v in measured.values()) * RUNS_PER_SUITE
    high = sum(max(v) for v in measured.values()) * RUNS_PER_SUITE
    cards = sorted({str(suites[s]["card"]) for s in measured})
    return {
        "what": f"{' + '.join(measured)} suite-runs, each x {RUNS_PER_SUITE} runs, one after another on one GPU, "
        "every episode to the OpenVLA-OFT horizon (the 7B stand-in scores 0)",
        "gpu_s": [round(low, 1), round(high, 1)] if low != high else [round(low, 1)],
        "gpu_min": [round(low / 60, 1), round(high / 60, 1)] if low != high else [round(low / 60, 1)],
        "from": "the fastest and the slowest measured run of each suite",
        "missing_suites": [s for s in PROTOCOL_SUITES if s not in measured],
        "cards": cards,
        "mixed_cards": len(cards) > 1,
        "measured": "each suite-run's wall time on one GPU (server start, every episode, the tail)",
        "projected": "nothing: but the sum assumes runs back to back with no Job start-up between them, and the "
        "8-GPU figure (sharding, docs/scale.md) is a projection, since no multi-GPU machine was lent",
        "early_ending": early_ending(),
    }


def early_ending() -> dict[str, Any]:
    """How much shorter episodes are for a policy that succeeds: the scripted expert's measured steps."""
    if not EXPERT.exists():
        return {"measured": False, "why": f"{EXPERT.name} is missing"}
    doc = json.loads(EXPERT.read_text())["suites"]["libero_spatial"]
    out: dict[str, Any] = {"source": f"bench/results/{EXPERT.name} ({doc.get('command')})", "levels": []}
    for level in doc.get("levels", []):
        steps = 0.0
        episodes = 0
        for task in level["per_task"].values():
            ok = task["successes"]
            steps += ok * task["mean_steps_success"] + (task["episodes"] - ok) * level["max_steps"]
            episodes += task["episodes"]
        out["levels"].append(
            {
                "policy": level["policy"],
                "success_rate": level["success_rate"],
                "mean_steps": round(steps / episodes, 1),
                "of_horizon": round(steps / episodes / level["max_steps"], 3),
            }
        )
    out["suite"] = "libero_spatial only: the other suites' effect is not measured"
    out["reading"] = (
        "a policy's episodes end at success, so its suite-run steps the fraction `of_horizon` of the measured "
        "figure's env steps; the fixed part (server start, env set-up, tail) does not shrink"
    )
    return out


def table(doc: dict[str, Any]) -> str:
    """The suites as the docs show them."""
    lines = ["suite | horizon (OFT / RLinf) | wall s | workers | card"]
    for name, entry in doc.get("suites", {}).items():
        walls = " / ".join(f"{w:.1f}" for w in entry["wall_s"])
        lines.append(
            f"{name} | {entry['max_steps']} / {RLINF_MAX_STEPS.get(name, '?')} | {walls} | {entry['workers']} | "
            f"{entry['card']}"
        )
    pc = doc.get("per_checkpoint", {})
    lines.append(f"per checkpoint, one GPU: {pc.get('gpu_min')} min ({pc.get('what')})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--add", nargs="*", type=Path, default=[], help="suite_lease.sh result files to fold in")
    parser.add_argument("--lease", default="", help="the lease the files come from (kind, date, device clock)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    args = parser.parse_args(argv)
    doc: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"benchmark": "gpu_suites"}
    if args.add:
        if not args.lease:
            parser.error("--add needs --lease: every run keeps the lease it was measured in")
        out = results_path(args.out, update_results=args.update_results, name="gpu_suites.json")
        add_runs(doc, args.add, args.lease)
        doc["per_checkpoint"] = per_checkpoint(doc["suites"])
        out.write_text(json.dumps(doc, indent=2) + "\n")
    print(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
