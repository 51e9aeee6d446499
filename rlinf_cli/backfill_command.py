"""``rlinf-bench backfill ROOT [--steps 25,50,75,100 | --all]``: evaluate checkpoints that already exist.

The brief's cron loop over fixed steps, done right: checkpoints are discovered by listing, an
existing execution of the deterministic name means "already evaluated" (skipped), incomplete
checkpoints are skipped with the reason instead of being evaluated half-written, and a listed step
with no checkpoint is named. On a deployed stack (``--state-machine-arn``) each one starts an
execution; on one machine (a local ROOT and no state machine) they run through the embedded default,
as ``pipeline`` runs them, and DIR's record of what was evaluated decides what is skipped.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rlinf_bench.errors import ConfigError
from rlinf_cli.intake_common import STATE_MACHINE_ENV, Clients, add_intake_options, intake_config, state_machine_arn
from rlinf_clikit.arguments import add_budget_arguments, budget_overrides
from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import emit_json, quiet_stdout


def _steps(text: str) -> set[int]:
    try:
        return {int(s) for s in text.split(",") if s.strip()}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--steps {text!r}: give comma-separated integers, e.g. 25,50,75,100") from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "backfill",
        help="evaluate the complete, not yet evaluated checkpoints under a run root",
        description="The brief's scheduled loop (evaluate steps 25, 50, 75, 100 when they exist), accounted for: "
        "each listed step is evaluated, skipped as already evaluated (saying by which execution), left as "
        "incomplete, or named as not found. On one machine (a local ROOT, no state machine) the checkpoints run "
        "through the embedded default into --out DIR, as `rlinf-bench pipeline` runs them, and DIR's record says "
        "what was evaluated; with --state-machine-arn each starts an execution of the deployed stack. "
        "--dry-run prints the same lines and starts nothing.",
        epilog="example: rlinf-bench backfill demo-out/runs --steps 100,200,300 --out demo-out --dry-run\n"
        "         rlinf-bench backfill s3://bucket/runs/exp --steps 25,50,75,100 --state-machine-arn ARN",
        formatter_class=ExampleFormatter,
    )
    p.add_argument(
        "root",
        metavar="ROOT",
        help="a local RLinf log root or run folder (…/<experiment>/checkpoints/global_step_<N> below it), or "
        "s3://bucket/prefix on a deployed stack",
    )
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
    local = p.add_argument_group("on this machine (a local ROOT and no state machine: the embedded default)")
    local.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="the embedded default's folder (MLflow store, report, outbox, state.json): what it records as evaluated "
        "is skipped (required on this machine; e.g. the demo's demo-out)",
    )
    local.add_argument(
        "--tracking-uri", default="", help="publish to this MLflow server instead of the local store DIR/mlflow.db"
    )
    local.add_argument("--max-parallel", type=int, default=2, help="Jobs running at once (default 2)")
    local.add_argument(
        "--policy",
        default=None,
        metavar="SPEC",
        help="the policy to evaluate, as evaluate --policy takes it (default: the config's; without --config "
        "builtin:demo); checked against the checkpoints before anything starts",
    )
    add_budget_arguments(
        p,
        title="budget on this machine (overrides --config's eval matrix)",
        what="the config's, else 3 runs, 3 trials, 20 steps",
    )
    p.set_defaults(func=run)


def on_this_machine(args: argparse.Namespace) -> bool:
    """A local ROOT and no state machine (flag or environment): the embedded default evaluates it."""
    arn = args.state_machine_arn or any(os.environ.get(n) for n in STATE_MACHINE_ENV)
    return not args.root.startswith("s3://") and not arn


def run(args: argparse.Namespace) -> int:
    if on_this_machine(args):
        return run_local(args)
    local_only = [
        f for f, v in (("--out", args.out), ("--policy", args.policy), ("--tracking-uri", args.tracking_uri)) if v
    ]
    if local_only or budget_overrides(args):
        given = ", ".join(local_only + [f"--{k.replace('_', '-')}" for k in budget_overrides(args)])
        raise ConfigError(
            f"{given}: for a backfill on this machine (a local ROOT, no --state-machine-arn); a deployed stack "
            "evaluates with its intake config (--config)"
        )
    from rlinf_aws.execution_starter import ExecutionStarter
    from rlinf_aws.s3_objects import S3Objects
    from rlinf_bench.checkpoints.completeness import check_completeness
    from rlinf_bench.checkpoints.discovery import discover_checkpoints
    from rlinf_bench.checkpoints.listing import CheckpointLister

    clients = Clients(args.region)
    config = intake_config(args, clients)
    arn = state_machine_arn(args)
    starter = ExecutionStarter(clients("stepfunctions"), arn) if arn else None
    objects = S3Objects(factory=lambda: clients("s3"))
    found = discover_checkpoints(args.root, objects=objects, patterns=config.patterns)
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
        verdict = check_completeness(ref.uri, CheckpointLister(objects), quiet_period_s=config.quiet_period_s)
        if starter is not None and starter.exists(request.request_id):
            row.update(status="already_evaluated", detail="an execution of this name exists")
        elif not verdict.complete:
            row.update(status="incomplete", detail=verdict.reason)
        elif starter is None:  # --dry-run without a stack: whether an execution exists is not asked
            row.update(status="would_start", detail=f"{verdict.reason} (not checked: was it evaluated? no ARN)")
        elif args.dry_run:  # --dry-run with an ARN: what exists is asked, nothing is started
            row.update(status="would_start", detail=verdict.reason)
        else:
            request = config.request_for(ref.model_copy(update={"layout": verdict.layout or ref.layout}))
            result = starter.start(request)
            _mark_backfilled(store, ref.uri)
            row.update(status="already_evaluated" if result.already_started else "started", detail=result.execution_arn)
        rows.append(row)
    rows += not_found_rows(args.steps, {r.global_step for r in found}, args.root)
    print_rows(rows, [r.global_step for r in found if r not in refs], args.root, as_json=args.json)
    return 0


def not_found_rows(steps: set[int] | None, found: set[int], root: str) -> list[dict[str, Any]]:
    """One row per step of ``--steps`` that has no checkpoint under ``root``."""
    missing = sorted((steps or set()) - found)
    detail = "no checkpoint global_step_{} under {}"
    return [
        {"global_step": s, "checkpoint": "", "status": "not_found", "detail": detail.format(s, root)} for s in missing
    ]


def run_local(args: argparse.Namespace) -> int:
    """The embedded default: evaluate the checkpoints to start into --out DIR (exit 1 when one failed)."""
    from rlinf_local.backfill import backfill_local
    from rlinf_local.commands import quiet_loggers, user_argv

    if args.superseded or args.backlog_table:
        raise ConfigError(
            "--superseded and --backlog-table read a deployed stack's backlog table: give --state-machine-arn"
        )
    if args.out is None:
        raise ConfigError(
            f"backfill {args.root} on this machine needs --out DIR: the folder the evaluations go to, whose record of "
            "what was evaluated is skipped (e.g. --out demo-out after make demo); on a deployed stack give "
            "--state-machine-arn ARN"
        )
    if args.config.startswith(("ssm:", "s3://")):
        raise ConfigError(
            f"--config {args.config}: on this machine give a YAML or JSON file (or none: the small budget)"
        )
    quiet_loggers(getattr(args, "verbose", False))
    with quiet_stdout(args.json):
        rows, outcome = backfill_local(
            Path(args.root),
            steps=args.steps,
            out=args.out,
            config=Path(args.config) if args.config else None,
            tracking_uri=args.tracking_uri,
            max_parallel=args.max_parallel,
            budget=budget_overrides(args),
            policy=args.policy,
            quiet_period_s=args.quiet_period,
            dry_run=args.dry_run,
            progress=not args.json,
            argv=user_argv(args),
        )
    found = {r.global_step for r in rows if r.status != "not_found"}
    ignored = [] if args.steps is None else _ignored_steps(Path(args.root), found)
    print_rows([r.to_dict() for r in rows], ignored, args.root, as_json=args.json)
    return 0 if outcome is None or outcome.ok else 1


def _ignored_steps(root: Path, chosen: set[int]) -> list[int]:
    from rlinf_bench.checkpoints.discovery import discover_checkpoints

    return sorted(r.global_step for r in discover_checkpoints(str(root.resolve())) if r.global_step not in chosen)


def print_rows(rows: list[dict[str, Any]], ignored_steps: list[int], root: str, *, as_json: bool) -> None:
    """One line per checkpoint or listed step, and the summary (``--json``: the rows as one JSON list)."""
    if as_json:
        emit_json(rows)
        return
    from rlinf_bench.reporting.text_safety import plain

    for row in rows:  # details quote checkpoint keys: no escape sequence reaches the terminal
        print(plain(f"step {row['global_step']:>8}  {row['status']:<17}  {row['detail']}"))
    print(summary_line(rows, ignored_steps, root))


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
    """Every checkpoint found, accounted for (the counts add up to what discovery listed), then the listed
    steps that have no checkpoint."""
    found = [r for r in rows if r["status"] != "not_found"]
    missing = [r["global_step"] for r in rows if r["status"] == "not_found"]
    counts = {name: sum(1 for r in found if r["status"] == status) for status, name in SUMMARY_NAMES.items()}
    parts = [f"{n} {name}" for name, n in counts.items() if n or not name.startswith("would")]
    ignored = f"{len(ignored_steps)} ignored" + (f" (not in --steps: {ignored_steps})" if ignored_steps else "")
    total = len(found) + len(ignored_steps)
    line = f"{total} checkpoints under {root}: {', '.join(parts)}, {ignored} (= {sum(counts.values()) + len(ignored_steps)})"
    return line + (f"; listed but not found: step(s) {missing}" if missing else "")
