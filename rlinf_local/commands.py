"""``rlinf-bench pipeline | demo | watch | status``: the embedded default's commands.

They reach the core CLI through the ``rlinf_bench.commands`` entry points (pyproject.toml), like the
Job packages' commands, so the core never imports this package.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from rlinf_clikit.arguments import add_budget_arguments, add_target_argument, budget_overrides, target_of
from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import emit_json, quiet_stdout

__all__ = ["quiet_loggers", "register_demo", "register_pipeline", "register_status", "register_watch", "user_argv"]


def quiet_loggers(verbose: bool) -> None:
    # The moto server logs every request, and moto's engine logs a Fail state as an error: both are noise here.
    for name in ("werkzeug", "moto"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.CRITICAL)
    for name in ("botocore", "mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.WARNING)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, required=True, help="folder for MLflow, report, outbox, results and state")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON document on stdout")
    p.add_argument(
        "--tracking-uri",
        default="",
        help="publish to this MLflow server (http://...) instead of the local store DIR/mlflow.db",
    )
    p.add_argument("--max-parallel", type=int, default=2, help="Jobs running at once (default 2)")


def add_policy_argument(p: argparse.ArgumentParser, default: str) -> None:
    """``--policy SPEC``: the same grammar as ``evaluate --policy``, over the eval matrix's ``policy``."""
    p.add_argument(
        "--policy",
        default=None,
        metavar="SPEC",
        help=f"the policy to evaluate, as evaluate --policy takes it (builtin:NAME, rlinf:CONFIG, python:MODULE:FACTORY, "
        f"server:ws://HOST:PORT, openpi:ws://HOST:PORT; `rlinf-bench evaluate --help` lists every kind); checked "
        f"against the checkpoint's files before anything starts (default: {default})",
    )


def user_argv(args: argparse.Namespace) -> list[str]:
    """What the user typed after ``rlinf-bench`` (rlinf_cli.main keeps it), for messages that say what to run."""
    return list(getattr(args, "command_line", None) or [args.command])


def register_pipeline(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pipeline",
        help="evaluate one checkpoint through the whole AWS flow on this machine (moto, local Jobs)",
        description="Deploy template.yaml into a local moto account, put the checkpoint into its bucket, and "
        "let S3 -> EventBridge -> SQS -> router -> Step Functions -> Jobs -> aggregate -> publish run. "
        "Writes DIR/mlflow.db, DIR/report/report.html, DIR/outbox/email/*.txt, DIR/outbox/slack/*.json. "
        "Exit status 1 when an execution failed; 2 on bad input; 130 on Ctrl-C (run it again to resume).",
        epilog="example: rlinf-bench pipeline runs/exp/checkpoints/global_step_400 --out pipeline-out",
        formatter_class=ExampleFormatter,
    )
    add_target_argument(
        p, "checkpoint", metavar="CHECKPOINT", help="an RLinf checkpoint directory (…/checkpoints/global_step_N)"
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="intake config (YAML/JSON eval matrix, docs/intake.md); default: the demo's small budget",
    )
    _common(p)
    add_policy_argument(p, "the config's policy; without --config builtin:demo, a tiny MLP read from the checkpoint")
    _budget_over_config(p)
    p.set_defaults(func=_run_pipeline)


def _budget_over_config(p: argparse.ArgumentParser) -> None:
    add_budget_arguments(
        p,
        title="budget (overrides the eval matrix of --config, or of the small default)",
        what="the config's; without --config 3 runs, 3 trials, 20 steps",
    )


def _run_pipeline(args: argparse.Namespace) -> int:
    from rlinf_local.runs import run_pipeline

    checkpoint = str(target_of(args, "checkpoint"))
    budget = budget_overrides(args)
    quiet_loggers(getattr(args, "verbose", False))
    with quiet_stdout(args.json):
        outcome = run_pipeline(
            [checkpoint],
            out=args.out,
            config=args.config,
            tracking_uri=args.tracking_uri,
            max_parallel=args.max_parallel,
            progress=not args.json,
            budget=budget,
            policy=args.policy,
            argv=user_argv(args),
            verbose=bool(getattr(args, "verbose", False)),
        )
    if args.json:
        emit_json(outcome.to_dict())
    return 0 if outcome.ok else 1


def register_demo(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="the whole product on this machine: two demo checkpoints through the pipeline (make demo)",
        description="Write two demo checkpoints of one experiment (global_step 100 and 200) that carry the "
        "settings of a scripted expert with simulator access (not a learned policy): step 100 with action noise "
        "1.5, step 200 without. Run the pipeline on both in turn; the second is compared with the first and "
        "comes out above it, with the initial states that flipped listed. Budget: LIBERO-Spatial tasks "
        "0, 2, 5, 7 x 3 initial states x 1 run, 130 steps, 2 workers; probes storage, checkpoint_io, gpu, "
        "nccl (gloo).",
        epilog="example: rlinf-bench demo --out demo-out",
        formatter_class=ExampleFormatter,
    )
    _common(p)
    p.add_argument(
        "--paper",
        action="store_true",
        help="every task at the RLinf protocol's own 512 steps (1 run, 2 states): the verdict against the "
        "paper's number is decided, not not_comparable (about 22 min on 2 cores)",
    )
    add_policy_argument(p, "builtin:expert?settings=checkpoint, the scripted expert whose settings each step carries")
    p.add_argument(
        "--robustness",
        metavar="AXES",
        type=robustness_text,
        help="also play perturbed episodes beside their unperturbed twins and show the report's robustness "
        "section: quick (every axis at level 2, one per task's first initial state: 4 more episodes per "
        "checkpoint), full, or AXIS[:LEVELS],... (docs/robustness.md); off (default): none",
    )
    add_budget_arguments(
        p,
        title="budget (smaller for CI, a slow machine)",
        what="the demo's own: 1 run, 3 states, 130 steps; with --paper 1 run, 2 states, the protocol's 512",
    )
    p.set_defaults(func=_run_demo)


def robustness_text(value: str) -> str | None:
    """``--robustness``: checked as the matrix will read it, so a typo stops before the stack starts."""
    from rlinf_bench.contracts.robustness import OFF_WORDS, parse_robustness_text

    if value.strip().lower() in OFF_WORDS:
        return None
    try:
        parse_robustness_text(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _run_demo(args: argparse.Namespace) -> int:
    from rlinf_local.demo_command import run_demo

    budget = budget_overrides(args)
    quiet_loggers(getattr(args, "verbose", False))
    with quiet_stdout(args.json):
        outcome = run_demo(
            args.out,
            tracking_uri=args.tracking_uri,
            max_parallel=args.max_parallel,
            budget=budget,
            paper=args.paper,
            policy=args.policy,
            robustness=args.robustness,
            argv=user_argv(args),
            verbose=bool(getattr(args, "verbose", False)),
        )
    if args.json:
        emit_json(outcome.to_dict())
    return 0 if outcome.ok else 1


def register_watch(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        help="evaluate every checkpoint that completes under a local RLinf log root (one workstation)",
        description="Mirror ROOT into the local bucket as files appear; the router's own completeness and "
        "quiet-period rules decide when a checkpoint is complete, and each complete one runs through the "
        "pipeline once. State under DIR: a restart evaluates nothing twice. Ctrl-C leaves nothing half-recorded.",
        epilog="example: rlinf-bench watch runs/ --out watch-out",
        formatter_class=ExampleFormatter,
    )
    add_target_argument(
        p, "root", metavar="ROOT", help="RLinf log root (…/<experiment>/checkpoints/global_step_N below it)"
    )
    p.add_argument("--config", type=Path, default=None, help="intake config; default: the demo's small budget")
    p.add_argument("--quiet-period", type=float, default=None, help="seconds nothing may change (default: config's)")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between scans of ROOT (default 2)")
    p.add_argument("--max-checkpoints", type=int, default=0, help="stop after this many evaluations (0: never)")
    p.add_argument(
        "--max-running", type=int, default=None, help="executions per experiment at once (config backlog.max_running)"
    )
    p.add_argument(
        "--backlog", default=None, metavar="all|latest|every:K", help="held checkpoints to start when one ends"
    )
    _common(p)
    add_policy_argument(p, "the config's policy; without --config builtin:demo, a tiny MLP read from the checkpoint")
    _budget_over_config(p)
    p.set_defaults(func=_run_watch)


def _run_watch(args: argparse.Namespace) -> int:
    from rlinf_local.watch import watch

    root = Path(str(target_of(args, "root")))
    budget = budget_overrides(args)
    quiet_loggers(getattr(args, "verbose", False))
    with quiet_stdout(args.json):
        outcome = watch(
            root,
            out=args.out,
            config=args.config,
            tracking_uri=args.tracking_uri,
            max_parallel=args.max_parallel,
            quiet_period_s=args.quiet_period,
            interval_s=args.interval,
            max_checkpoints=args.max_checkpoints,
            progress=not args.json,
            budget=budget,
            backlog=_backlog_flags(args),
            policy=args.policy,
            argv=user_argv(args),
            verbose=bool(getattr(args, "verbose", False)),
        )
    if args.json:
        emit_json(outcome.to_dict())
    return 0 if all(e.outcome == "SUCCEEDED" for e in outcome.executions) else 1


def _backlog_flags(args: argparse.Namespace) -> dict[str, object]:
    flags: dict[str, object] = {}
    if args.max_running is not None:
        flags["max_running"] = args.max_running
    if args.backlog is not None:
        flags["when_free"] = args.backlog
    return flags


def register_status(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "status",
        help="list evaluations: state, runs done/failed, verdict (local --out DIR or a deployed stack)",
        description="Read DIR/state.json of the embedded default, or ask Step Functions about a deployed stack.",
        epilog="example: rlinf-bench status --out demo-out\n"
        "         rlinf-bench status --state-machine-arn arn:aws:states:us-east-1:123456789012:stateMachine:rlinf",
        formatter_class=ExampleFormatter,
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path, help="an embedded default's folder")
    where.add_argument("--state-machine-arn", help="the deployed stack's EvaluationStateMachineArn")
    p.add_argument(
        "--limit", type=int, default=None, help="newest executions to show (with --state-machine-arn; default 20)"
    )
    p.add_argument(
        "--compute",
        default="",
        help="also list the Kueue Jobs (queued / running / done) on this cluster (COMPUTE syntax)",
    )
    p.add_argument("--namespace", default="rlinf-eval", help="the Jobs' namespace (with --compute)")
    p.add_argument("--json", action="store_true", help="print {executions: [...]} as JSON")
    p.set_defaults(func=_run_status)


def _run_status(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from rlinf_local.status_command import (
        backlog_lines,
        format_jobs,
        format_status,
        local_status,
        queued_jobs,
        remote_status,
    )

    if args.out and args.limit is not None:
        from rlinf_bench.errors import ConfigError

        raise ConfigError("--limit applies to --state-machine-arn (a deployed stack); --out DIR lists every execution")
    limit = 20 if args.limit is None else args.limit
    executions = local_status(args.out) if args.out else remote_status(args.state_machine_arn, limit=limit)
    jobs = queued_jobs(args.compute, args.namespace) if args.compute else None
    if args.json:
        doc: dict[str, object] = {"executions": [e.public() for e in executions]}
        if jobs is not None:
            doc["jobs"] = [
                {"job": j.name, "state": j.phase.value, "detail": j.explain(datetime.now(UTC))} for j in jobs
            ]
        emit_json(doc)
    else:
        print(format_status(executions))
        if jobs is not None:
            print(format_jobs(jobs))
        held = backlog_lines(args.out) if args.out else ""
        if held:
            print(held)
    return 0
