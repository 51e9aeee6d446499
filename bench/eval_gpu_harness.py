"""``bench/eval_gpu.py``'s harness part: ``rlinf-bench evaluate`` itself, run as a child, and its figures."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import CAMERAS, SETTLE, SUITE, TASK, run_cli  # noqa: E402

#: the driver, whose ``--as-evaluate`` runs :func:`cli_evaluate` in a child process
DRIVER = ROOT / "bench" / "eval_gpu.py"


def zero_spec(resolution: int) -> str:
    """``builtin:zero`` asking for the benchmark's cameras (rendered and shipped, then ignored)."""
    return f"builtin:zero?cameras={','.join(CAMERAS)}&resolution={resolution}"


def evaluate_cmd(
    n: int,
    trials: int,
    max_steps: int,
    policy: str,
    out: Path,
    cache: Path,
    extra: list[str],
    tasks: str = str(TASK),
    suite: str = SUITE,
) -> list[str]:
    # cli_evaluate() below: the evaluate command's own parser, EvalRun and settings, without its doctor
    # preflight (which wants rlinf-bench pip-installed with every extra pinned; the GPU machine runs the tree)
    return [
        sys.executable, str(DRIVER), "--as-evaluate", "--suite", suite, "--tasks", tasks, "--trials", str(trials),
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
    suite: str = SUITE,
) -> dict[str, Any]:
    """One ``python -m eval_runner`` run over ``tasks`` (``trials`` each); its steady-state and whole-run figures."""
    tag = f"n{n}{'_'.join(['', *extra]).replace('-', '')}"
    out, log = work / f"{tag}.json", work / f"{tag}.log"
    task_ids = ",".join(map(str, tasks))
    cmd = evaluate_cmd(n, trials, max_steps, zero_spec(resolution), out, cache, extra, task_ids, suite)
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


def cli_evaluate(argv: list[str]) -> int:
    """``rlinf-bench evaluate ARGV`` minus the environment preflight: same parser, EvalRun, settings, runner."""
    import logging

    from eval_runner.api import evaluate, parse_evaluate_args

    run, settings = parse_evaluate_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    evaluate(run, out_path=run.output_uri, settings=settings, command=["rlinf-bench", "evaluate", *argv])
    return 0
