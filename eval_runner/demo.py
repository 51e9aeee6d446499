"""``python -m eval_runner.demo``: a small, real evaluation of a checkpoint by the eval runner alone.

(``make demo`` runs the whole product instead: ``rlinf-bench demo``, docs/embedded.md.)

It writes a small RLinf-layout (FSDP) checkpoint whose weights are the demo policy's parameters, then
evaluates it on real LIBERO-Spatial: 2 tasks x 2 fixed initial states, a short horizon, 2 worker
processes, with the checkpoint-reading ``builtin:demo`` policy looking at the agent-view camera. The
policy is a toy, so its success rate is ~0; the point is that every piece is real: the checkpoint is
read, the simulator renders and steps, success is LIBERO's own check, and the result file is the same
RunResult a production Job writes.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rlinf_bench.contracts import EvalRun, RunResult, request_id_for

DEMO_SUITE = "libero_spatial"
DEMO_TASKS = [0, 1]
DEMO_TRIALS = 2
DEMO_MAX_STEPS = 60
DEMO_WORKERS = 2
# The demo policy reads its weights from the checkpoint and the mean colour of a 64 px agent-view image.
DEMO_POLICY = "builtin:demo?cameras=agentview&resolution=64"


def run_demo(out_dir: Path, *, workers: int = DEMO_WORKERS, progress: bool = True) -> tuple[RunResult, Path]:
    """Write the demo checkpoint under ``out_dir`` and evaluate it; returns the result and its path."""
    from eval_runner.demo_checkpoint import write_demo_checkpoint
    from eval_runner.loop import evaluate
    from eval_runner.settings import EvalSettings

    ref = write_demo_checkpoint(out_dir / "runs", experiment="demo", global_step=100)
    run = EvalRun(
        request_id=request_id_for(ref),
        checkpoint=ref,
        suite=DEMO_SUITE,
        run_index=0,
        seed=0,
        task_ids=DEMO_TASKS,
        trials_per_task=DEMO_TRIALS,
        max_steps=DEMO_MAX_STEPS,
        policy=DEMO_POLICY,
        workers=workers,
    )
    out = out_dir / "results" / f"{DEMO_SUITE}-run0.json"
    result = evaluate(run, out_path=out, settings=EvalSettings(progress=progress), command=sys.argv)
    return result, out


def main(argv: Sequence[str] | None = None) -> int:
    from eval_runner.cli import format_table
    from rlinf_bench.errors import RlinfBenchError

    parser = argparse.ArgumentParser(prog="python -m eval_runner.demo", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("demo-out"), help="where the checkpoint and result go")
    parser.add_argument("--workers", type=int, default=DEMO_WORKERS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    t0 = time.perf_counter()
    try:
        result, path = run_demo(args.out, workers=args.workers)
    except RlinfBenchError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 2
    print()
    print(format_table(result))
    print(f"\ncheckpoint: {result.checkpoint.uri if result.checkpoint else '-'}")
    print(f"result:     {path}")
    print(
        f"took {time.perf_counter() - t0:.0f} s. The demo policy is a toy: ~0 % success on LIBERO is the honest "
        "number. Evaluate a real checkpoint with: python -m eval_runner --checkpoint DIR --policy SPEC"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
