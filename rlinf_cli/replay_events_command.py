"""``rlinf-bench replay-events FILE.jsonl``: run recorded S3 events through the real router, locally.

Answers "what would the intake have done with these events?" without an AWS account: one
execution per complete checkpoint, the dead letters with their reasons and line numbers, and the
checkpoints still waiting for files that never arrived. No line stops it (not UTF-8, not JSON, nested
thousands deep, a bucket moto cannot create: each is dead with its reason); the exit status is 1 when
any record was dead, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from rlinf_cli.help_format import ExampleFormatter

if TYPE_CHECKING:
    from rlinf_local.replay_events import ReplayReport


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay-events",
        help="feed recorded S3 events (JSON lines) through the router in local moto",
        description='Answer "what would the intake have done with these events?" without an AWS account: each '
        "recorded S3 event goes through the real router against a local moto account; prints one execution per "
        "complete checkpoint, the dead letters with their reasons and line numbers, and the checkpoints still "
        "waiting for files.",
        epilog="example: rlinf-bench replay-events events/recorded-export.jsonl\n"
        "exit status: 0 when no record was dead, 1 when any was (each dead line is listed with its reason)",
        formatter_class=ExampleFormatter,
    )
    p.add_argument("file", metavar="FILE.jsonl", help="one S3 event per line (EventBridge or classic shape); - = stdin")
    p.add_argument("--quiet-period", type=float, default=None, metavar="SECONDS", help="override quiet_period_s")
    p.add_argument("--config", default="", help="intake config file (YAML/JSON); default: built-in")
    p.add_argument("--json", action="store_true", help="print {executions, dead_letters, pending, summary} as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from rlinf_bench.errors import ConfigError
    from rlinf_bench.intake.config import load_intake_config
    from rlinf_bench.reporting.text_safety import plain
    from rlinf_local.replay_events import replay_events

    config = load_intake_config(args.config)
    if args.quiet_period is not None:
        config = config.model_copy(update={"quiet_period_s": args.quiet_period})
    if args.file == "-":
        data = sys.stdin.buffer.read()
    else:
        path = Path(args.file)
        if not path.is_file():
            raise ConfigError(f"event file {args.file} does not exist; record events one JSON document per line")
        data = path.read_bytes()
    # Bytes, split on "\n" only: a bad byte costs its own line, and U+2028 inside a JSON string splits nothing.
    report = replay_events(data.split(b"\n"), config=config)
    status = 1 if report.counts["dead"] else 0
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
        return status
    print(plain(summary_line(report)))
    for reason, n in report.ignored_reasons.items():
        print(f"  ignored   {n:>3} x {plain(reason)}")
    for e in report.executions:
        print(f"  started   {plain(e['name'])}  {plain(e['checkpoint']['uri'])}")
    for d in report.dead_letters:
        where = f"line {d['line']}" if d["line"] is not None else "line ?"
        print(f"  dead      {where}: {plain(d['reason'])}")
    for p in report.pending:
        print(f"  pending   {plain(p['checkpoint']['uri'])}: {plain(p['reason'])}")
    return status


def summary_line(report: ReplayReport) -> str:
    """Every record read, accounted for: the outcome counts add up to the records."""
    counts = ", ".join(f"{n} {name}" for name, n in report.counts.items())
    records = f" ({report.records} object records)" if report.records != report.events else ""
    return (
        f"{report.events} events{records}: {counts} (= {sum(report.counts.values())}); "
        f"{len(report.executions)} executions, {len(report.dead_letters)} dead letters"
    )
