"""Held and superseded checkpoints for ``status`` and the report: DIR/backlog.json, or the stack's table.

The embedded default's DynamoDB lives in moto and ends with the command, so ``watch`` copies the backlog's
decisions to DIR/backlog.json after each execution; ``status --out DIR`` and the report read that file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlinf_bench.reporting.backlog_section import NOT_EVALUATED, BacklogRow
from rlinf_bench.reporting.text_safety import plain

BACKLOG_FILE = "backlog.json"

__all__ = ["BACKLOG_FILE", "format_backlog", "mark_evaluated", "read_backlog", "save_backlog", "table_backlog"]


def table_backlog(dynamodb: Any, table: str) -> list[BacklogRow]:
    """Every decision the backlog recorded in the intake's table (stack output IdempotencyTableName)."""
    from rlinf_aws.backlog_store import DynamoBacklogStore

    return [BacklogRow.model_validate(e.model_dump(mode="json")) for e in DynamoBacklogStore(dynamodb, table).entries()]


def save_backlog(out: Path, rows: list[BacklogRow]) -> None:
    """Write DIR/backlog.json (replaced whole: the store is the truth, this is its copy)."""
    (out / BACKLOG_FILE).write_text(json.dumps([r.model_dump(mode="json") for r in rows], indent=2) + "\n")


def read_backlog(out: Path) -> list[BacklogRow]:
    """DIR/backlog.json's rows ([] when the backlog never held anything)."""
    path = out / BACKLOG_FILE
    if not path.is_file():
        return []
    return [BacklogRow.model_validate(r) for r in json.loads(path.read_text())]


def mark_evaluated(rows: list[BacklogRow], evaluated: set[str]) -> list[BacklogRow]:
    """``rows`` with each held or superseded checkpoint that has a report since marked ``backfilled``.

    In the embedded default a superseded checkpoint is evaluated later with ``pipeline ... --out DIR``, a
    command outside the backlog's table, so the report it leaves in DIR is what says it was evaluated."""
    return [
        r.model_copy(update={"state": "backfilled", "reason": f"evaluated later (was {r.state}: {r.reason})"})
        if r.state in ("held", "superseded") and r.uri.rstrip("/") in evaluated
        else r
        for r in rows
    ]


def format_backlog(rows: list[BacklogRow]) -> str:
    """Lines for ``status``: each held / superseded / backfilled checkpoint with its reason ('' if none)."""
    shown = [r for r in rows if r.state in NOT_EVALUATED]
    if not shown:
        return ""
    # backfill --superseded reads a deployed stack's table; here one checkpoint is evaluated into the same DIR
    lines = [
        "held / superseded checkpoints "
        "(rlinf-bench pipeline ROOT/<experiment>/checkpoints/global_step_<N> --out DIR evaluates one):"
    ]
    lines += [f"  {r.experiment} step {r.global_step:>7}  {r.state:<10}  {r.reason}" for r in shown]
    return "\n".join(plain(line) for line in lines)
