"""``rlinf-bench replay-events FILE.jsonl``: run recorded S3 events through the real router, locally.

Answers "what would the intake have done with these events?" without an AWS account: one
execution per complete checkpoint, the dead letters with their reasons and line numbers, and the
checkpoints still waiting for files that never arrived. No line stops it (over 256 KiB, not UTF-8, not
JSON, nested thousands deep, a bucket moto cannot create: each is dead with its reason and line number);
the exit status is 1 when any record was dead, 0 otherwise, 2 for a bad option (``--quiet-period`` must
be a finite number of seconds, 0 or more).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING

from rlinf_clikit.help_format import ExampleFormatter

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
    p.add_argument(
        "--quiet-period",
        type=quiet_period,
        default=None,
        metavar="SECONDS",
        help="override quiet_period_s (a finite number of seconds, 0 or more)",
    )
    p.add_argument("--config", default="", help="intake config file (YAML/JSON); default: built-in")
    p.add_argument("--json", action="store_true", help="print {executions, dead_letters, pending, summary} as JSON")
    p.set_defaults(func=run)


def quiet_period(text: str) -> float:
    """``--quiet-period``: seconds, finite and not negative (``inf``, ``nan`` and ``-5`` are refused, exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a finite number of seconds, 0 or more (the replay's clock jumps by it)"
        )
    return value


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pydantic import ValidationError

    from rlinf_bench.errors import ConfigError
    from rlinf_bench.intake.config import load_intake_config
    from rlinf_bench.reporting.text_safety import plain
    from rlinf_local.replay_events import read_lines, replay_events

    config = load_intake_config(args.config)
    if args.quiet_period is not None:
        # Validated as the config file is (model_copy would skip the config's own bounds).
        try:
            config = type(config).model_validate({**config.model_dump(), "quiet_period_s": args.quiet_period})
        except ValidationError as exc:
            problems = "; ".join(e["msg"] for e in exc.errors(include_url=False))
            raise ConfigError(f"--quiet-period {args.quiet_period:g}: {problems}") from None
    if args.file == "-":
        report = replay_events(read_lines(sys.stdin.buffer), config=config)
    else:
        path = Path(args.file)
        if not path.is_file():
            raise ConfigError(f"event file {args.file} does not exist; record events one JSON document per line")
        # Bytes, split on "\n" only (a bad byte costs its own line, U+2028 inside a JSON string splits nothing),
        # each line bounded: a 1 GB line is dead with its length, never read whole.
        with path.open("rb") as stream:
            report = replay_events(read_lines(stream), config=config)
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
