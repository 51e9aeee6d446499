"""``rlinf-bench backfill ROOT_URI [--steps 25,50,75,100 | --all]``: evaluate checkpoints that already exist.

The brief's cron loop over fixed steps, done right: checkpoints are discovered by listing, an
existing execution of the deterministic name means "already evaluated" (skipped), and incomplete
checkpoints are skipped with the reason instead of being evaluated half-written.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from rlinf_bench.errors import ConfigError
from rlinf_cli.help_format import ExampleFormatter
from rlinf_cli.intake_common import Clients, add_intake_options, intake_config, state_machine_arn


def _steps(text: str) -> set[int]:
    try:
        return {int(s) for s in text.split(",") if s.strip()}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--steps {text!r}: give comma-separated integers, e.g. 25,50,75,100") from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "backfill",
        help="evaluate the complete, not yet evaluated checkpoints under a run root",
        epilog="example: rlinf-bench backfill s3://bucket/runs/exp --steps 25,50,75,100 --dry-run",
        formatter_class=ExampleFormatter,
    )
    p.add_argument("root", metavar="ROOT_URI", help="s3://bucket/prefix or a local directory above checkpoints/")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--steps", type=_steps, default=None, help="only these global steps, e.g. 25,50,75,100")
    which.add_argument("--all", action="store_true", help="every checkpoint found (the default)")
    which.add_argument(
        "--superseded",
        action="store_true",
        help="only the checkpoints the backlog held or superseded (needs --backlog-table)",
    )
    p.add_argument(
        "--backlog-table",
        default="",
        metavar="TABLE",
        help="the intake's DynamoDB table (stack output IdempotencyTableName), where the backlog records decisions",
    )
    add_intake_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlinf_aws.execution_starter import ExecutionStarter
    from rlinf_bench.checkpoints.completeness import check_completeness, lister_for
    from rlinf_bench.checkpoints.discovery import discover_checkpoints

    clients = Clients(args.region)
    config = intake_config(args, clients)
    arn = state_machine_arn(args)
    starter = ExecutionStarter(clients("stepfunctions"), arn) if arn else None
    found = discover_checkpoints(args.root, s3_factory=lambda: clients("s3"), patterns=config.patterns)
    refs = found if args.steps is None else [r for r in found if r.global_step in args.steps]
    store = _backlog_store(args, clients)
    if args.superseded:
        refs = [r for r in found if r.uri in _not_started(store)]
    if not refs:
        raise ConfigError(f"no RLinf checkpoints (…/checkpoints/global_step_<N>/actor/…) found under {args.root}")
    rows: list[dict[str, Any]] = []
    for ref in refs:
        request = config.request_for(ref)
        row: dict[str, Any] = {"global_step": ref.global_step, "checkpoint": ref.uri, "name": request.request_id}
        verdict = check_completeness(
            ref.uri, lister_for(ref.uri, lambda: clients("s3")), quiet_period_s=config.quiet_period_s
        )
        if starter is not None and starter.exists(request.request_id):
            row.update(status="already_evaluated", detail="an execution of this name exists")
        elif not verdict.complete:
            row.update(status="incomplete", detail=verdict.reason)
        elif starter is None or args.dry_run:  # --dry-run with an ARN: what exists is asked, nothing is started
            row.update(status="would_start", detail=verdict.reason)
        else:
            request = config.request_for(ref.model_copy(update={"layout": verdict.layout or ref.layout}))
            result = starter.start(request)
            _mark_backfilled(store, ref.uri)
            row.update(status="already_evaluated" if result.already_started else "started", detail=result.execution_arn)
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        from rlinf_bench.reporting.text_safety import plain

        for row in rows:  # details quote checkpoint keys: no escape sequence reaches the terminal
            print(plain(f"step {row['global_step']:>8}  {row['status']:<17}  {row['detail']}"))
        print(summary_line(rows, [r.global_step for r in found if r not in refs], args.root))
    return 0


def _backlog_store(args: argparse.Namespace, clients: Clients) -> Any:
    if not args.backlog_table:
        if args.superseded:
            raise ConfigError(
                "backfill --superseded needs --backlog-table TABLE (the stack output IdempotencyTableName)"
            )
        return None
    from rlinf_aws.backlog_store import DynamoBacklogStore

    return DynamoBacklogStore(clients("dynamodb"), args.backlog_table)


def _not_started(store: Any) -> set[str]:
    from rlinf_bench.intake.backlog import State

    return {e.uri for e in store.entries() if e.state in (State.HELD, State.SUPERSEDED)}


def _mark_backfilled(store: Any, uri: str) -> None:
    """Record that a held or superseded checkpoint was evaluated on request (status and the report show it)."""
    if store is None:
        return
    from rlinf_bench.intake.backlog import State

    for old in (State.SUPERSEDED, State.HELD):
        if store.transition(uri, old, State.BACKFILLED, f"evaluated by backfill (was {old.value})"):
            return


#: Row status -> the name every batch summary uses (started, duplicate, pending, dead, ignored).
SUMMARY_NAMES = {
    "started": "started",
    "already_evaluated": "duplicate (already evaluated)",
    "incomplete": "pending (incomplete)",
    "would_start": "would start (--dry-run)",
}


def summary_line(rows: list[dict[str, Any]], ignored_steps: list[int], root: str) -> str:
    """Every checkpoint found, accounted for; the counts add up to what discovery listed."""
    counts = {name: sum(1 for r in rows if r["status"] == status) for status, name in SUMMARY_NAMES.items()}
    parts = [f"{n} {name}" for name, n in counts.items() if n or not name.startswith("would")]
    ignored = f"{len(ignored_steps)} ignored" + (f" (not in --steps: {ignored_steps})" if ignored_steps else "")
    total = len(rows) + len(ignored_steps)
    return f"{total} checkpoints under {root}: {', '.join(parts)}, {ignored} (= {sum(counts.values()) + len(ignored_steps)})"
