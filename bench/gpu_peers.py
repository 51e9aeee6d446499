"""Assemble ``bench/results/gpu_peers_h200.json`` from the ``bench/eval_gpu.py --parts suite`` runs of one lease.

Issue 25 asks for every GPU figure twice in one lease, both values printed. This script takes the result
files of those suite runs (each ``eval_gpu.py --parts suite ... --out $OUT/suite_K.json``), checks that
they are complete runs of the same work with the same settings, and writes one document with each
figure as a list (one value per run), the lease's time and the commands. What the file held before
is kept: its headline (an earlier lease's figures) under ``--keep-previous-as`` instead of being
overwritten, and the sections of still earlier leases where they were, so a comparison across leases
stays possible and is never mistaken for one within a lease. Single runs
made only to choose settings go under ``exploratory`` (``--exploratory``), never into the headline.

Like ``eval_gpu.py``, it writes into the tracked ``bench/results/`` only with ``--update-results``.

Example (the files as they came back from the device)::

    python bench/gpu_peers.py --suite-runs suite_1.json suite_2.json --lease "nvidia-h200, 2026-12-02 22:52-23:14 UTC" \\
        --keep-previous-as baseline_before_batching --exploratory smoke_a.json smoke_b.json \\
        --vla-eval-runs vla_1.json vla_2.json --out bench/results/gpu_peers_h200.json --update-results
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import results_path  # noqa: E402  (the same guard on bench/results/)

#: the settings two runs must share to be "the same work measured twice"
SAME_WORK = ("suite", "max_steps", "settle_steps", "cameras", "resolution")
SAME_SETTINGS = ("server_command", "inflight", "server_cpus")
#: goals of issue 25 for the served suite, measured in one lease
GOAL_SUITE_WALL_S = 270.0
GOAL_SM_ACTIVITY_PCT = 75.0
WHOLE_SUITE_EPISODES = 500  # 10 tasks x 50 initial states
#: what one assembly writes: the headline of its lease (--keep-previous-as moves an earlier one aside)
HEADLINE_KEYS = frozenset(
    {
        "benchmark", "lease", "suite", "episodes", "max_steps", "settle_steps", "cameras", "resolution",
        "machine", "code", "rlinf_bench", "goals_met", "vla_eval", "harness_over_raw_15",
        "harness_over_raw_15_lease", "commands", "runs", "exploratory",
    }
)  # fmt: skip


def load_suite_run(path: Path) -> dict[str, Any]:
    """One ``eval_gpu.py --parts suite`` result; an error naming the file when it is not a complete run."""
    doc = json.loads(path.read_text())
    run = doc.get("suite_7b")
    if not isinstance(run, dict):
        raise SystemExit(f"{path}: no 'suite_7b' figures; give the output of bench/eval_gpu.py --parts suite")
    if run.get("status") != "complete":
        raise SystemExit(
            f"{path}: the suite run is {run.get('status')!r} ({run.get('error')}); only complete runs count"
        )
    return doc


def check_same(docs: list[dict[str, Any]], paths: list[Path]) -> None:
    """Refuse runs of different work or settings: their figures are not one figure measured twice."""
    first = docs[0]
    for doc, path in zip(docs[1:], paths[1:], strict=True):
        for key in SAME_WORK:
            if doc.get(key) != first.get(key):
                raise SystemExit(f"{path}: {key} {doc.get(key)!r} differs from {paths[0]}'s {first.get(key)!r}")
        for key in SAME_SETTINGS:
            a, b = first["suite_7b"].get(key), doc["suite_7b"].get(key)
            if a != b:
                raise SystemExit(f"{path}: {key} {b!r} differs from {paths[0]}'s {a!r}")


def figures(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure of the runs as a list, one value per run, in the order given."""
    runs = [d["suite_7b"] for d in docs]

    def each(get: Any) -> list[Any]:
        return [get(r) for r in runs]

    return {
        "wall_s": each(lambda r: r["wall_s"]),
        "sm_activity": each(lambda r: r["gpu"].get("mean_sm_active_pct")),
        "tensor_activity": each(lambda r: r["gpu"].get("mean_tensor_active_pct")),
        "nvml_util_pct": each(lambda r: r["gpu"].get("mean_util_pct")),
        # the client's requests (one per ready batch of rows) and the server's merged policy calls
        "client_requests": each(lambda r: r["policy_calls"]),
        "mean_rows_per_request": each(lambda r: r.get("server", {}).get("mean_rows_per_request")),
        "policy_calls": each(lambda r: r.get("server", {}).get("policy_calls", r["policy_calls"])),
        "mean_rows_per_call": each(lambda r: r.get("server", {}).get("mean_rows_per_call", r["mean_batch"])),
        "occupied_env_steps_per_s": each(lambda r: r["occupied_env_steps_per_s"]),
        "steady_env_steps_per_s": each(lambda r: r["steady_env_steps_per_s"]),
        "server_start_s": each(lambda r: r["server_start_s"]),
        # the model thread's share of the time from the first call to the stop, whole and per tenth of it
        "model_busy": each(lambda r: r.get("server", {}).get("model_busy")),
        "model_busy_by_tenth": each(lambda r: r.get("server", {}).get("model_busy_by_tenth")),
        "ms_per_row": each(lambda r: r.get("server", {}).get("ms_per_row")),
        # compiles after the server said "serving" (backbone=lean-compiled): each one is inside the wall time
        "server_recompiles": each(lambda r: r.get("server_recompiles")),
        "mean_reset_s": each(lambda r: r["mean_reset_s"]),
        "status": each(lambda r: r["status"]),
        "settings": {
            "workers": int(runs[0]["command"].split("--workers ")[1].split()[0]),
            "inflight": runs[0].get("inflight"),
            "server_cpus": runs[0].get("server_cpus"),
            "server_batching": runs[0].get("server_batching"),
            "forward": runs[0].get("forward"),
        },
        "server_command": runs[0]["server_command"],
        "evaluate_command": runs[0]["command"],
    }


def load_peer_run(path: Path, ours: dict[str, Any]) -> dict[str, Any]:
    """One ``bench/peer_vla_eval.py`` result of the same work as our runs; an error naming the file otherwise."""
    doc = json.loads(path.read_text())
    run = doc.get("run")
    if doc.get("benchmark") != "peer_vla_eval" or not isinstance(run, dict):
        raise SystemExit(f"{path}: not a bench/peer_vla_eval.py result (no 'run'); give its --out file")
    if run.get("status") != "complete":
        raise SystemExit(f"{path}: the vla-eval run is {run.get('status')!r}; only complete runs count")
    ours_trials = ours["suite_7b"]["episodes"] // 10
    for key, want in (("suite", ours["suite"]), ("max_steps", ours["max_steps"]), ("trials_per_task", ours_trials)):
        if doc.get(key) != want:
            raise SystemExit(f"{path}: {key} {doc.get(key)!r} differs from our runs' {want!r}: not the same work")
    return doc


def peer_figures(docs: list[dict[str, Any]], ours_wall_s: list[float]) -> dict[str, Any]:
    """vla-eval's figures, one value per run, and our wall time over theirs pair by pair (same lease only).

    One vla-eval run beside several of ours (a 500-episode vla-eval run takes most of a lease) is set
    against each of ours in turn.
    """
    runs = [d["run"] for d in docs]
    peer_wall_s = [r["wall_s"] for r in runs] * (len(ours_wall_s) if len(runs) == 1 else 1)
    return {
        "version": docs[0]["harness"]["version"],
        "wall_s": [r["wall_s"] for r in runs],
        "episodes": [r["episodes"] for r in runs],
        "successes": [r.get("successes") for r in runs],
        "sm_activity": [r["gpu"].get("mean_sm_active_pct") for r in runs],
        "policy_rows_per_s": [r["policy_rows_per_s"] for r in runs],
        "mean_rows_per_forward": [r["server"].get("mean_rows_per_forward") for r in runs],
        "cpu_busy_pct": [r["cpu_busy_pct"] for r in runs],
        "settings": {k: docs[0][k] for k in ("shards", "server_cores", "max_batch", "max_wait_ms")},
        # issue 25's goal (>= 1.3) is episodes per hour on the same work: the inverse of the wall-time ratio
        "ours_over_vla_eval_episodes_per_h": [round(b / a, 2) for a, b in zip(ours_wall_s, peer_wall_s, strict=True)],
        "ours_over_vla_eval_wall": [round(a / b, 3) for a, b in zip(ours_wall_s, peer_wall_s, strict=True)],
        "commands": [d["command"] for d in docs],
    }


def goals(fig: dict[str, Any], episodes: int) -> dict[str, Any]:
    """Issue 25's suite goals, met only when every run meets them, and judged only on a whole suite."""
    wall, sm = f"suite_wall_s_le_{GOAL_SUITE_WALL_S:g}", f"sm_activity_ge_{GOAL_SM_ACTIVITY_PCT:g}"
    if episodes < WHOLE_SUITE_EPISODES:
        return {
            wall: None,
            sm: None,
            "note": f"not judged: {episodes} episodes, the goals are for the whole suite ({WHOLE_SUITE_EPISODES})",
        }
    return {
        wall: all(w <= GOAL_SUITE_WALL_S for w in fig["wall_s"]),
        sm: all(s is not None and s >= GOAL_SM_ACTIVITY_PCT for s in fig["sm_activity"]),
    }


def assemble(
    suite_paths: list[Path],
    lease: str,
    previous: dict[str, Any],
    keep_as: str | None,
    exploratory: list[Path],
    peer_paths: tuple[Path, ...] | list[Path] = (),
) -> dict[str, Any]:
    docs = [load_suite_run(p) for p in suite_paths]
    if len(docs) < 2:
        raise SystemExit("--suite-runs: give at least two runs of one lease (issue 25: every figure twice)")
    check_same(docs, suite_paths)
    if peer_paths and len(peer_paths) not in (1, len(docs)):
        raise SystemExit(
            f"--vla-eval-runs: give one run, or one per --suite-runs file ({len(docs)}) paired in lease order"
        )
    first = docs[0]
    fig = figures(docs)
    doc: dict[str, Any] = {
        "benchmark": "gpu_peers",
        "lease": lease,
        "suite": first["suite"],
        "episodes": docs[0]["suite_7b"]["episodes"],
        **{k: first[k] for k in ("max_steps", "settle_steps", "cameras", "resolution", "machine")},
        "rlinf_bench": {**fig, "policy": "bench/llama_policy.py 7B stand-in served with rlinf-bench serve-policy"},
        "goals_met": goals(fig, docs[0]["suite_7b"]["episodes"]),
        "vla_eval": peer_figures([load_peer_run(p, first) for p in peer_paths], fig["wall_s"])
        if peer_paths
        else previous.get("vla_eval", {"version": "0.8.0", "wall_s": None, "note": "not measured yet"}),
        # not part of these runs: carried from the file, with the lease it was measured in
        "harness_over_raw_15": previous.get("harness_over_raw_15"),
        "harness_over_raw_15_lease": previous.get("harness_over_raw_15_lease", previous.get("lease")),
        "commands": ["source bench/gpu_setup.sh  # carry .gl and .gpu_bundle (bench/gpu_bundle.py --suite SUITE)"]
        + [c for d in docs for c in d["commands"]],
        "runs": {"suite": docs},
    }
    if exploratory:
        doc["exploratory"] = {
            "note": "single runs in the same lease, to choose settings; not headline figures",
            "runs": [json.loads(p.read_text()) for p in exploratory],
        }
    if previous:
        # earlier leases' sections stay where they are (the docs name them); only the headline moves
        doc |= {k: v for k, v in previous.items() if k not in HEADLINE_KEYS and k not in doc}
    if keep_as and previous:
        dropped = ("benchmark",) if peer_paths else ("benchmark", "vla_eval")  # else vla_eval was carried above
        doc[keep_as] = {k: v for k, v in previous.items() if k in HEADLINE_KEYS and k not in dropped}
    return doc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite-runs", nargs="+", type=Path, required=True, help="eval_gpu.py --parts suite outputs")
    parser.add_argument(
        "--vla-eval-runs",
        nargs="*",
        type=Path,
        default=[],
        help="bench/peer_vla_eval.py outputs: one, or one per --suite-runs file in its order",
    )
    parser.add_argument("--lease", required=True, help="the machine kind and the lease's UTC time")
    parser.add_argument("--out", type=Path, required=True, help="the document to write")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    parser.add_argument("--keep-previous-as", help="key under which --out's current content is kept (else dropped)")
    parser.add_argument("--exploratory", nargs="*", type=Path, default=[], help="single runs kept for reference")
    parser.add_argument("--extra", type=Path, help="a JSON object merged into 'exploratory' (e.g. a diagnostic)")
    args = parser.parse_args()
    out = results_path(args.out, update_results=args.update_results)
    previous = json.loads(out.read_text()) if out.exists() else {}
    doc = assemble(args.suite_runs, args.lease, previous, args.keep_previous_as, args.exploratory, args.vla_eval_runs)
    if args.extra:
        doc.setdefault("exploratory", {}).update(json.loads(args.extra.read_text()))
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps({"wall_s": doc["rlinf_bench"]["wall_s"], "goals_met": doc["goals_met"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
