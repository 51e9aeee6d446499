"""``rlinf-bench backfill ROOT --steps 25,50,75,100 --out DIR`` on one machine: the brief's scheduled loop.

The brief's cron job evaluates fixed steps of a run when their folder exists. Here every listed step is
accounted for: a step already evaluated in DIR (its execution in ``DIR/state.json``, the record ``pipeline``,
``watch`` and ``demo`` keep, finished: succeeded or failed) is skipped with a line saying which execution
evaluated it; a step with no checkpoint under ROOT is named; an incomplete one waits; the rest run through one
local stack, in step order, exactly as ``pipeline`` runs them (the next sees the previous one in MLflow).
``--dry-run`` prints the same lines and starts nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rlinf_bench.checkpoints.completeness import check_completeness
from rlinf_bench.checkpoints.discovery import discover_checkpoints
from rlinf_bench.checkpoints.listing import CheckpointLister
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.errors import ConfigError
from rlinf_bench.intake.config import parse_config_text
from rlinf_local.embedded import Embedded
from rlinf_local.executions import ExecutionSummary
from rlinf_local.inputs import LocalCheckpoint, local_checkpoint
from rlinf_local.pipeline_command import STATE_FILE, PipelineOutcome, StateFile
from rlinf_local.policy_check import check_matrix_policy, rerun_command
from rlinf_local.runs import config_text_for, print_adaptations, print_outcome, run_checkpoints

__all__ = ["BackfillRow", "backfill_local", "evaluated_in", "plan_backfill"]

#: Executions that evaluated their checkpoint to the end; an interrupted one is resumed instead.
FINISHED = ("SUCCEEDED", "FAILED", "TIMED_OUT")


@dataclass
class BackfillRow:
    """One listed step or found checkpoint and what backfill did (or, with --dry-run, would do) with it."""

    global_step: int
    checkpoint: str
    status: str  # started | already_evaluated | incomplete | would_start | not_found
    detail: str
    experiment: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluated_in(out: Path) -> dict[tuple[str, int], ExecutionSummary]:
    """(experiment, global_step) -> the finished execution that evaluated it in ``out`` (the newest one)."""
    if not (out / STATE_FILE).exists():
        return {}
    done: dict[tuple[str, int], ExecutionSummary] = {}
    for e in StateFile(out).state.executions:
        step = e.checkpoint.get("global_step")
        if e.status in FINISHED and isinstance(step, int):
            done[(str(e.checkpoint.get("experiment", "")), step)] = e
    return done


def plan_backfill(
    root: Path, steps: set[int] | None, out: Path, *, quiet_period_s: float
) -> tuple[list[BackfillRow], list[LocalCheckpoint]]:
    """Every checkpoint under ``root`` (only ``steps`` when given) and every listed step found nowhere, each with
    what to do; and the checkpoints to evaluate, in experiment and step order."""
    if not root.is_dir():
        raise ConfigError(
            f"backfill: {root} is not a directory; give the RLinf log root or one run's folder "
            "(…/<experiment>/checkpoints/global_step_<N> below it)"
        )
    found = discover_checkpoints(str(root.resolve()))
    chosen = [r for r in found if steps is None or r.global_step in steps]
    done = evaluated_in(out)
    rows: list[BackfillRow] = []
    todo: list[LocalCheckpoint] = []
    for ref in chosen:
        row, ckpt = _decide(ref, done.get((ref.experiment, ref.global_step)), quiet_period_s)
        rows.append(row)
        todo += [ckpt] if ckpt is not None else []
    for step in sorted((steps or set()) - {r.global_step for r in found}):
        expected = f"{root}/<experiment>/checkpoints/global_step_{step}"
        rows.append(BackfillRow(step, "", "not_found", f"no checkpoint global_step_{step} under {root} ({expected})"))
    return rows, todo


def _decide(
    ref: CheckpointRef, execution: ExecutionSummary | None, quiet_period_s: float
) -> tuple[BackfillRow, LocalCheckpoint | None]:
    row = BackfillRow(ref.global_step, ref.uri, "", "", ref.experiment)
    if execution is not None:
        verdict = f": {execution.verdict}" if execution.verdict else ""
        row.status, row.detail = (
            "already_evaluated",
            f"skipped, evaluated by {execution.name} ({execution.describe()}){verdict}",
        )
        return row, None
    complete = check_completeness(ref.uri, CheckpointLister(), quiet_period_s=quiet_period_s)
    if not complete.complete:
        row.status, row.detail = "incomplete", complete.reason
        return row, None
    row.status, row.detail = "would_start", complete.reason
    return row, local_checkpoint(ref.uri)


def backfill_local(
    root: Path,
    *,
    steps: set[int] | None,
    out: Path,
    config: Path | None = None,
    tracking_uri: str = "",
    max_parallel: int = 2,
    budget: dict[str, int] | None = None,
    policy: str | None = None,
    quiet_period_s: float | None = None,
    dry_run: bool = False,
    progress: bool = True,
    argv: Sequence[str] = (),
) -> tuple[list[BackfillRow], PipelineOutcome | None]:
    """Plan the backfill, then (unless ``dry_run``) evaluate the checkpoints to start through one local stack.

    The policy is checked against them before the stack is built, as ``pipeline`` does; the rows of the
    evaluated checkpoints end with their execution's outcome (None: nothing was started)."""
    out = out.resolve()
    text = config_text_for(config, out, budget, policy, command="rlinf-bench backfill")
    quiet = quiet_period_s if quiet_period_s is not None else parse_config_text(text, source="--config").quiet_period_s
    rows, todo = plan_backfill(root, steps, out, quiet_period_s=quiet)
    if dry_run or not todo:
        return rows, None
    check_matrix_policy(text, [c.path for c in todo], argv=argv)
    with Embedded(
        out,
        rerun_command=rerun_command(argv),
        config_text=text,
        tracking_uri=tracking_uri,
        max_parallel=max_parallel,
        progress=progress,
    ) as emb:
        print_adaptations(emb)
        outcome = run_checkpoints(emb, todo)
    started = {(c.experiment, c.global_step): e for c, e in zip(todo, outcome.executions, strict=False)}
    for row in rows:
        execution = started.get((row.experiment, row.global_step))
        if row.status == "would_start" and execution is not None:
            verdict = f": {execution.verdict}" if execution.verdict else ""
            row.status, row.detail = "started", f"evaluated by {execution.name} ({execution.describe()}){verdict}"
    print_outcome(outcome)
    return rows, outcome
