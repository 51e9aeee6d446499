"""``rlinf-bench compare``: aggregate the RunResults of one checkpoint and print verdicts."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rlinf_clikit.help_format import ExampleFormatter

log = logging.getLogger(__name__)

#: What ``--out DIR`` holds afterwards (rlinf_tracking.mlflow_publish.write_local_artifacts writes them).
REPORT_FILES = "checkpoint_report.json, report.md and sr_vs_step.png"

if TYPE_CHECKING:
    from rlinf_bench.contracts import CheckpointReport, ProbeResult
    from rlinf_bench.document_store import Storage
    from rlinf_bench.stats.verdicts import VerdictConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="aggregate RunResult files of one checkpoint; verdicts vs baselines and a previous checkpoint",
        description=(
            "Aggregate the runs of one checkpoint (mean, std, clustered and Wilson 95% intervals per suite) and "
            "compare with published baselines and/or a previous checkpoint. See docs/statistics.md."
        ),
        epilog="example: rlinf-bench compare out/run*.json --baseline libero/openvla-oft-rlinf --previous prev/run*.json",
        formatter_class=ExampleFormatter,
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
    p.add_argument(
        "--probe", nargs="+", default=[], metavar="PROBE.json", help="ProbeResult files for the infrastructure checks"
    )
    p.add_argument("--runs", type=int, default=3, help="runs expected per suite (default 3); fewer gives 'incomplete'")
    p.add_argument(
        "--tolerance", type=float, default=0.02, help="vs baselines, as a fraction (default 0.02 = 2 points)"
    )
    p.add_argument("--tolerance-previous", type=float, default=0.0, help="vs the previous checkpoint (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the one-sided tests (default 0.05)")
    p.add_argument("--json", action="store_true", help="print the CheckpointReport as JSON instead of tables")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless every suite has all its runs and every verdict is decisive and good (above or within): "
        "below, inconclusive, incomplete, not_comparable, or no verdict at all exit 1, the reasons on stderr",
    )
    p.add_argument(
        "--adaptive",
        action="store_true",
        help="adaptive budget: the runs given are rounds of a group-sequential design (O'Brien-Fleming alpha "
        "spending, up to 6 rounds); verdicts use its boundaries and each suite says stop or continue "
        "(docs/statistics.md). Any number of complete runs is accepted",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"write {REPORT_FILES} into DIR (with --publish the default is ./reports/<request id>; "
        "without it, nothing is written unless --out is given)",
    )
    pub = p.add_argument_group("publishing (previous/best then come from MLflow)")
    pub.add_argument("--publish", action="store_true", help="publish the report to MLflow (parent + child runs)")
    pub.add_argument(
        "--tracking-uri", default=None, help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI); only with --publish"
    )
    pub.add_argument(
        "--experiment",
        default=None,
        help="MLflow experiment to publish into (default: RLinf); the checkpoint's training experiment's "
        "name publishes into RLinf, where its runs live; only with --publish",
    )
    p.set_defaults(func=run)


def _refuse_publish_only_flags(args: argparse.Namespace) -> None:
    """--tracking-uri and --experiment mean something only when publishing: refuse them instead of ignoring them."""
    from rlinf_bench.errors import ConfigError

    given = [f for f, v in (("--tracking-uri", args.tracking_uri), ("--experiment", args.experiment)) if v is not None]
    if given and not args.publish:
        raise ConfigError(
            f"{' and '.join(given)} only apply with --publish (they say where to publish): add --publish, "
            f"or drop {' and '.join(given)}"
        )


def run(args: argparse.Namespace) -> int:
    from rlinf_bench.baselines import get_baselines
    from rlinf_bench.errors import ConfigError, ResultsMismatchError
    from rlinf_bench.reporting.infra_rows import infra_checks
    from rlinf_bench.stats.aggregate import aggregate_checkpoint, load_runs
    from rlinf_bench.stats.verdicts import VerdictConfig, apply_verdicts

    if args.runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {args.runs}")
    try:
        cfg = VerdictConfig(tolerance=args.tolerance, tolerance_previous=args.tolerance_previous, alpha=args.alpha)
    except ValueError as exc:
        raise ConfigError(f"--tolerance/--tolerance-previous/--alpha: {exc}") from exc
    baselines = get_baselines(args.baseline)  # unknown names fail before any file is read
    _refuse_publish_only_flags(args)
    if args.adaptive and args.publish:
        raise ConfigError("--adaptive is not yet available with --publish: compare, then publish the fixed protocol")
    if args.publish:
        report = _publish(args, cfg)
        return _finish(args, report)
    storage = result_storage()
    report = aggregate_checkpoint(
        load_runs(args.results, storage=storage), runs_expected=1 if args.adaptive else args.runs
    )
    previous = None
    if args.previous:
        previous = aggregate_checkpoint(load_runs(args.previous, storage=storage), runs_expected=args.runs)
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
    report.probes = _load_probes(args.probe)
    report.infra = infra_checks(report.probes)
    apply_verdicts(report, baselines, cfg=cfg, previous_report=previous)
    if args.adaptive:
        from rlinf_bench.stats.adaptive import AdaptiveDesign
        from rlinf_bench.stats.sequential import apply_adaptive

        apply_adaptive(report, AdaptiveDesign(alpha=args.alpha))
    if args.out:
        from rlinf_tracking.mlflow_publish import write_local_artifacts

        write_local_artifacts(report, Path(args.out), history=(), baselines=baselines)
        log.info("report files (%s) in %s", REPORT_FILES, args.out)
    return _finish(args, report)


def result_storage() -> Storage:
    """Where result files are read from: local paths, and ``s3://`` URIs with the AWS SDK's default credentials
    (the client is built only when an S3 URI is read)."""
    from rlinf_aws.s3_objects import S3Objects
    from rlinf_bench.document_store import Storage

    return Storage(S3Objects())


def _load_probes(paths: list[str]) -> list[ProbeResult]:
    from rlinf_bench.stats.aggregate import load_probes

    return load_probes(paths, storage=result_storage())


def _finish(args: argparse.Namespace, report: CheckpointReport) -> int:
    from rlinf_bench.reporting.markdown import checkpoint_markdown
    from rlinf_bench.reporting.text_safety import plain

    print(report.to_json() if args.json else checkpoint_markdown(report))
    if args.strict:
        reasons = strict_failures(report)
        for reason in reasons:
            print(plain(f"compare --strict: {reason}"), file=sys.stderr)
        return 1 if reasons else 0
    return 0


def strict_failures(report: CheckpointReport) -> list[str]:
    """Why ``--strict`` fails: anything short of a decisive, good verdict (above or within) on complete data."""
    from rlinf_bench.contracts import VerdictValue

    reasons = [
        f"{s.suite}: {s.runs_completed} of {s.runs_expected} run(s) complete"
        for s in report.suites
        if not s.complete or s.runs_completed < s.runs_expected
    ]
    if not report.complete and not reasons:
        reasons.append("the report is incomplete")
    if not report.verdicts:
        reasons.append("no verdict: pass --baseline or --previous")
    decisive_good = (VerdictValue.ABOVE, VerdictValue.WITHIN)
    for v in report.verdicts:
        if v.value not in decisive_good:
            why = f" ({v.reason})" if v.reason else ""
            reasons.append(f"{v.suite} vs {v.against}: {v.value.value}{why}")
    return reasons


def _publish(args: argparse.Namespace, cfg: VerdictConfig) -> CheckpointReport:
    import os

    from rlinf_bench.errors import ConfigError
    from rlinf_bench.stats.aggregate import load_runs

    if args.previous:
        raise ConfigError("--publish reads previous/best from MLflow: drop --previous")
    uri = args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not uri:
        raise ConfigError("--publish needs --tracking-uri URI (e.g. sqlite:///mlflow.db) or MLFLOW_TRACKING_URI")
    storage = result_storage()
    runs = load_runs(args.results, storage=storage)
    from mlflow.tracking import MlflowClient

    from rlinf_bench.reporting.episode_files import StoredRunFiles
    from rlinf_tracking.mlflow_experiments import publish_experiment
    from rlinf_tracking.summarize import summarize_and_publish

    out = Path(args.out or Path("reports") / (runs[0].result.request_id or "checkpoint"))
    client = MlflowClient(uri)
    ckpt = runs[0].result.checkpoint
    experiment = publish_experiment(
        client, args.experiment or "RLinf", training_experiment=ckpt.experiment if ckpt else ""
    )
    report = summarize_and_publish(
        runs,
        client=client,
        out_dir=out,
        runs_expected=args.runs,
        baseline_names=args.baseline,
        experiment=experiment,
        probes=_load_probes(args.probe),
        cfg=cfg,
        files=StoredRunFiles(storage),
    )
    log.info("published: MLflow run %s in experiment %r; files in %s", report.links.get("mlflow_run"), experiment, out)
    return report
