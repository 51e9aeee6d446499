"""``rlinf-bench compare``: aggregate the RunResults of one checkpoint and print verdicts."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="aggregate RunResult files of one checkpoint; verdicts vs baselines and a previous checkpoint",
        description=(
            "Aggregate the runs of one checkpoint (mean, std, clustered and Wilson 95%% intervals per suite) and "
            "compare with published baselines and/or a previous checkpoint. See docs/statistics.md."
        ),
    )
    p.add_argument("results", nargs="+", metavar="RESULT.json", help="RunResult files of one checkpoint")
    p.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="NAME",
        help="baseline name (repeatable), e.g. libero/openvla-oft-rlinf",
    )
    p.add_argument(
        "--previous", nargs="+", default=[], metavar="RESULT.json", help="RunResult files of the previous checkpoint"
    )
    p.add_argument("--runs", type=int, default=3, help="runs expected per suite (default 3); fewer gives 'incomplete'")
    p.add_argument(
        "--tolerance", type=float, default=0.02, help="vs baselines, as a fraction (default 0.02 = 2 points)"
    )
    p.add_argument("--tolerance-previous", type=float, default=0.0, help="vs the previous checkpoint (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the one-sided tests (default 0.05)")
    p.add_argument("--json", action="store_true", help="print the CheckpointReport as JSON instead of tables")
    p.add_argument("--strict", action="store_true", help="exit 1 when any verdict is below or incomplete")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlinf_bench.baselines import get_baselines
    from rlinf_bench.contracts import VerdictValue
    from rlinf_bench.errors import ConfigError, ResultsMismatchError
    from rlinf_bench.reporting.markdown import checkpoint_markdown
    from rlinf_bench.stats.aggregate import aggregate_checkpoint, load_runs
    from rlinf_bench.stats.verdicts import VerdictConfig, apply_verdicts

    if args.runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {args.runs}")
    try:
        cfg = VerdictConfig(tolerance=args.tolerance, tolerance_previous=args.tolerance_previous, alpha=args.alpha)
    except ValueError as exc:
        raise ConfigError(f"--tolerance/--tolerance-previous/--alpha: {exc}") from exc
    baselines = get_baselines(args.baseline)  # unknown names fail before any file is read
    report = aggregate_checkpoint(load_runs(args.results), runs_expected=args.runs)
    previous = None
    if args.previous:
        previous = aggregate_checkpoint(load_runs(args.previous), runs_expected=args.runs)
        if previous.checkpoint_uri and previous.checkpoint_uri == report.checkpoint_uri:
            raise ResultsMismatchError(
                f"--previous files ({', '.join(args.previous)}) are from the same checkpoint as the results "
                f"({report.checkpoint_uri}); pass the previous checkpoint's RunResults"
            )
        shared = {s.suite for s in report.suites} & {s.suite for s in previous.suites}
        if not shared:
            raise ResultsMismatchError(
                f"--previous files ({', '.join(args.previous)}) cover suites {sorted(s.suite for s in previous.suites)} "
                f"but the results ({', '.join(args.results)}) cover {sorted(s.suite for s in report.suites)}; "
                "nothing to compare"
            )
    apply_verdicts(report, baselines, cfg=cfg, previous_report=previous)
    print(report.to_json() if args.json else checkpoint_markdown(report))
    if args.strict and any(v.value in (VerdictValue.BELOW, VerdictValue.INCOMPLETE) for v in report.verdicts):
        return 1
    return 0
