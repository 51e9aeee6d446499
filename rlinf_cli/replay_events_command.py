"""``rlinf-bench replay-events FILE.jsonl``: run recorded S3 events through the real router, locally.

Answers "what would the intake have done with these events?" without an AWS account: one
execution per complete checkpoint, the dead letters with their reasons, and the checkpoints still
waiting for files that never arrived.
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
        epilog="example: rlinf-bench replay-events events/recorded-export.jsonl",
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
    from rlinf_local.replay_events import replay_events

    config = load_intake_config(args.config)
    if args.quiet_period is not None:
        config = config.model_copy(update={"quiet_period_s": args.quiet_period})
    if args.file == "-":
        lines = sys.stdin.read().splitlines()
    else:
        path = Path(args.file)
        if not path.is_file():
            raise ConfigError(f"event file {args.file} does not exist; record events one JSON document per line")
        lines = path.read_text().splitlines()
    report = replay_events(lines, config=config)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
        return 0
    print(summary_line(report))
    for reason, n in report.ignored_reasons.items():
        print(f"  ignored   {n:>3} x {reason}")
    for e in report.executions:
        print(f"  started   {e['name']}  {e['checkpoint']['uri']}")
    for d in report.dead_letters:
        print(f"  dead      {d['reason']}")
    for p in report.pending:
        print(f"  pending   {p['checkpoint']['uri']}: {p['reason']}")
    return 0


def summary_line(report: ReplayReport) -> str:
    """Every record read, accounted for: the outcome counts add up to the records."""
    counts = ", ".join(f"{n} {name}" for name, n in report.counts.items())
    records = f" ({report.records} object records)" if report.records != report.events else ""
    return (
        f"{report.events} events{records}: {counts} (= {sum(report.counts.values())}); "
        f"{len(report.executions)} executions, {len(report.dead_letters)} dead letters"
    )
