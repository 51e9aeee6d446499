"""``rlinf-bench baselines``: every baseline a checkpoint can be compared with, with its source and protocol.

Reads the catalogue (``rlinf_bench/data/baselines``): the brief's tables and the other published success
rates (each a ``compare --baseline NAME``), the best published results for context (never a verdict's
reference), and, per benchmark, what keeps two numbers from being compared.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import add_json_flag, emit_json

if TYPE_CHECKING:
    from rlinf_bench.baselines import Baseline, PublishedBest


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "baselines",
        help="list every baseline with its source, protocol and per-suite numbers",
        description="List the published success rates a checkpoint is compared with (the brief's LIBERO and "
        "RoboTwin 2.0 tables, RLinf's LIBERO-130 numbers, per-task tables), each with its source, the protocol and "
        "decoding it was measured under and its numbers per suite; then the best published results for context "
        "(not verdict references), and the protocols that must not be mixed. A NAME goes to "
        "`rlinf-bench compare --baseline NAME`.",
        epilog="example: rlinf-bench baselines --suite LIBERO-Long\n         rlinf-bench baselines --json",
        formatter_class=ExampleFormatter,
    )
    p.add_argument(
        "--benchmark", default=None, metavar="NAME", help="only this benchmark (libero, libero130, robotwin)"
    )
    p.add_argument(
        "--suite", default=None, metavar="NAME", help="only baselines with a number for this suite (any spelling)"
    )
    add_json_flag(p, "{baselines, best_published, protocol_notes}")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlinf_bench.baselines import all_baselines, best_published, protocol_notes
    from rlinf_bench.errors import ConfigError
    from rlinf_bench.suites import get_suite

    suite = get_suite(args.suite).name if args.suite else None  # "LIBERO-Long" -> libero_10; unknown: did you mean
    baselines = [b for b in all_baselines() if _kept(b.benchmark, b.values, args.benchmark, suite)]
    best = [b for b in best_published() if _kept(b.benchmark, b.values, args.benchmark, suite)]
    families = {b.benchmark.removesuffix("130") for b in baselines + best}
    notes = {k: v for k, v in protocol_notes().items() if k in families}
    if not baselines and not best:
        raise ConfigError(
            f"no baseline for {' and '.join(f for f in (args.benchmark, suite) if f)}; "
            f"benchmarks: {', '.join(sorted({b.benchmark for b in all_baselines()}))}"
        )
    if args.json:
        emit_json(
            {
                "baselines": [b.model_dump(mode="json") for b in baselines],
                "best_published": [b.model_dump(mode="json") for b in best],
                "protocol_notes": notes,
            }
        )
        return 0
    print("\n".join(baseline_lines(baselines, best, notes)))
    return 0


def _kept(benchmark: str, values: dict[str, float], only: str | None, suite: str | None) -> bool:
    return (only is None or benchmark == only) and (suite is None or suite in values)


def baseline_lines(baselines: list[Baseline], best: list[PublishedBest], notes: dict[str, list[str]]) -> list[str]:
    """The listing: per benchmark, each baseline's numbers, protocol and source; then the best published
    results and the notes on protocols."""
    lines: list[str] = []
    for benchmark in sorted({b.benchmark for b in baselines}):
        lines.append(f"{benchmark} (success rate, percent; compare --baseline NAME)")
        for b in (b for b in baselines if b.benchmark == benchmark):
            lines += [f"  {b.name}  {b.model}", f"    {_numbers(b.values, b.average)}"]
            lines += [f"    protocol: {_protocol(b)}"]
            lines += [f"    protocol read from: {b.protocol.source}"] if b.protocol is not None else []
            lines += [f"    source: {b.source}", ""]
    if best:
        lines.append("best published results (context, not verdict references)")
        for p in best:
            lines += [f"  {p.name}  {p.model}: {p.metric}", f"    {_numbers(p.values, None)}"]
            lines += [f"    protocol: {p.protocol}; decoding: {p.decoding}", f"    source: {p.source} ({p.date})", ""]
    for benchmark, texts in sorted(notes.items()):
        lines.append(f"{benchmark}: protocols that must not be mixed")
        lines += [f"  - {text}" for text in texts]
    return lines


def _numbers(values: dict[str, float], average: float | None) -> str:
    shown = [f"{key} {value:g}" for key, value in values.items()]
    return " · ".join(shown + ([f"average {average:g}"] if average is not None else []))


def _protocol(b: Baseline) -> str:
    if b.protocol is None:
        return "not recorded with these numbers (see the notes on protocols below)"
    steps = sorted(set(b.protocol.max_steps.values()))
    horizon = "/".join(str(s) for s in steps)
    return f"{b.protocol.name}, {horizon} steps, {b.protocol.settle_steps} settle steps, decoding {b.protocol.decoding}"
