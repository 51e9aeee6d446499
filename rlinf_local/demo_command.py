"""``rlinf-bench demo`` (``make demo``): two checkpoints of one experiment through the whole flow.

The checkpoints are written by the eval package's own command (``python -m eval_runner.demo_checkpoint``):
this package reaches eval_runner only through command lines, as the Jobs do on Kubernetes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.errors import CheckpointError
from rlinf_bench.reporting.format import pct
from rlinf_local.budget import small_matrix_yaml
from rlinf_local.embedded import Embedded
from rlinf_local.inputs import local_checkpoint
from rlinf_local.pipeline_command import PipelineOutcome
from rlinf_local.runs import print_adaptations, print_outcome, run_checkpoints
from rlinf_local.stack import REPO

__all__ = ["DEMO_STEPS", "run_demo", "verdict_table", "write_demo_checkpoints"]

#: (global_step, seed): two checkpoints of experiment "demo" with different weights.
DEMO_STEPS = ((100, 0), (200, 1))
EXPERIMENT = "demo"


def write_demo_checkpoints(root: Path) -> list[Path]:
    """Write the two demo checkpoints under ``root`` (an RLinf log root); returns their directories."""
    paths = []
    for step, seed in DEMO_STEPS:
        cmd = [sys.executable, "-m", "eval_runner.demo_checkpoint", str(root), "--experiment", EXPERIMENT]
        cmd += ["--step", str(step), "--seed", str(seed)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
        if proc.returncode != 0:
            raise CheckpointError(f"writing the demo checkpoint failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
        paths.append(root / EXPERIMENT / "checkpoints" / f"global_step_{step}")
    return paths


def verdict_table(out: Path, names: list[str]) -> str:
    """One line per checkpoint and suite: success rate over the runs and each verdict."""
    lines = [f"{'checkpoint':<16} {'suite':<16} {'runs':>4} {'SR':>7}  verdicts"]
    for name in names:
        path = out / "reports" / f"{name}.json"
        if not path.exists():
            lines.append(f"{name:<16} (no report: see the failure notice in DIR/outbox/email)")
            continue
        report = CheckpointReport.load(path)
        label = f"step {report.global_step}"
        for s in report.suites:
            verdicts = ", ".join(f"{v.against}: {v.value.value}" for v in s.verdicts) or "-"
            runs = f"{s.runs_completed}/{s.runs_expected}"
            lines.append(f"{label:<16} {s.suite:<16} {runs:>4} {pct(s.success_rate_mean):>7}  {verdicts}")
    return "\n".join(lines)


def run_demo(
    out: Path, *, tracking_uri: str = "", max_parallel: int = 2, budget: dict[str, int] | None = None
) -> PipelineOutcome:
    """Write the checkpoints, run both through one local stack, print the verdicts and where to look."""
    out = out.resolve()
    dirs = write_demo_checkpoints(out / "runs")
    refs = [local_checkpoint(str(d)) for d in dirs]
    with Embedded(
        out,
        config_text=small_matrix_yaml(out / "scratch", **(budget or {})),
        tracking_uri=tracking_uri,
        max_parallel=max_parallel,
    ) as emb:
        print_adaptations(emb)
        outcome = run_checkpoints(emb, refs)
    print()
    print(verdict_table(out, [e.name for e in outcome.executions]))
    print()
    print_outcome(outcome)
    print(
        "The demo policy is a toy (its weights are random): ~0 % success on LIBERO is the honest number. "
        "Every piece around it is real: the stack from template.yaml, the router, the state machine, "
        "the Jobs' rollouts in LIBERO, the statistics, MLflow and the notifications."
    )
    return outcome
