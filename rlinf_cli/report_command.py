"""``rlinf-bench report``: the report site of every checkpoint published to MLflow, from one entry page.

``report.html`` is the entry page (printed, and what the messages link): every checkpoint on one page, with
the drill-down to each checkpoint's, suite's and task's page. Rebuilt from MLflow, the task pages' videos
are restored from the parent runs' artifacts (``videos/<suite>/run<k>/``), read through the same checks
as any file a result names (:mod:`rlinf_bench.named_files`).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import add_json_flag, emit_json, quiet_stdout

if TYPE_CHECKING:
    from rlinf_bench.contracts import CheckpointReport
    from rlinf_bench.reporting.site import SiteFiles


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write a browsable HTML site + markdown report of every checkpoint in an MLflow experiment",
        description="Read every published checkpoint back from MLflow and write a static site: report.html, the "
        "entry page (every checkpoint on one self-contained page, linking down to checkpoint -> suite -> task "
        "pages with the initial-state grid, episodes, videos restored from MLflow and provenance), report.md "
        "and sr_vs_step.png.",
        epilog="example: rlinf-bench report --tracking-uri sqlite:///mlflow.db --out report/",
        formatter_class=ExampleFormatter,
    )
    p.add_argument("--tracking-uri", default=None, help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI)")
    p.add_argument(
        "--experiment",
        default=None,
        help="the MLflow experiment to read, or the name of a training experiment whose runs it holds (default: "
        "RLinf, where every training experiment's runs are published)",
    )
    # The option's earlier name, kept for scripts; one name in the help.
    p.add_argument("--mlflow-experiment", dest="experiment_alias", default=None, help=argparse.SUPPRESS)
    p.add_argument("--training-experiment", default=None, help="only checkpoints of this training experiment")
    p.add_argument("--baseline", action="append", default=[], metavar="NAME", help="baselines to draw (repeatable)")
    p.add_argument(
        "--reports",
        nargs="+",
        default=[],
        metavar="REPORT.json",
        help="build from CheckpointReport files (e.g. compare --json output) instead of MLflow",
    )
    p.add_argument("--out", default="report", help="output folder (default: ./report)")
    add_json_flag(p, "{checkpoints, html (the entry page), index (the same page), markdown, plot, pages}")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the site; ``--json`` prints where its files are (MLflow's own prints go to stderr then)."""
    args.experiment = _one_experiment(args.experiment, args.experiment_alias)
    with quiet_stdout(args.json):
        reports, files = _from_files(args) if args.reports else _from_mlflow(args)
    if args.json:
        emit_json(
            {
                "checkpoints": [r.checkpoint_uri for r in reports],
                "html": str(files.html),
                "index": str(files.html),  # the entry page, under the key earlier versions gave it
                "markdown": str(files.markdown),
                "plot": str(files.plot),
                "pages": len(files.pages),
            }
        )
    else:
        print(f"{len(reports)} checkpoint(s)\n{files.html}\n{files.markdown}")
    return 0


def _one_experiment(experiment: str | None, alias: str | None) -> str:
    """``--experiment``, or its earlier name ``--mlflow-experiment``; both with different values is refused."""
    from rlinf_bench.errors import ConfigError

    if experiment and alias and experiment != alias:
        raise ConfigError(
            f"--experiment {experiment} and --mlflow-experiment {alias} name one option (the experiment to read): "
            "give it once; --training-experiment NAME keeps one training experiment's checkpoints"
        )
    return experiment or alias or "RLinf"


def _from_mlflow(args: argparse.Namespace) -> tuple[list[CheckpointReport], SiteFiles]:
    from rlinf_bench.baselines import get_baselines
    from rlinf_bench.errors import ConfigError
    from rlinf_bench.reporting.plot import plot_baselines
    from rlinf_bench.reporting.site import write_site

    uri = args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not uri:
        raise ConfigError(
            "no tracking server: pass --tracking-uri URI (e.g. sqlite:///mlflow.db) or set MLFLOW_TRACKING_URI"
        )
    get_baselines(args.baseline)  # unknown names fail before MLflow is contacted
    from mlflow.tracking import MlflowClient

    from rlinf_tracking import BRIEF_FILTER, load_history, search_checkpoint_runs
    from rlinf_tracking.mlflow_experiments import resolve_experiment
    from rlinf_tracking.mlflow_videos import MlflowRunFiles

    client = MlflowClient(uri)
    # A training experiment's name (demo) finds its runs in the MLflow experiment; an unknown name lists both kinds.
    choice = resolve_experiment(client, args.experiment, default="RLinf", training_experiment=args.training_experiment)
    experiment, training = choice.mlflow_experiment, choice.training_experiment
    reports = load_history(client, experiment, training_experiment=training)
    # Evidence for the checklist: the brief's own query, and whether its runs carry success_rate.
    found = search_checkpoint_runs(client, experiment, training_experiment=training)
    if not found:
        raise ConfigError(
            f"no published checkpoint in MLflow experiment {experiment!r}"
            + (f" for training experiment {training!r}" if training else "")
            + f" at {uri}; publish one first (rlinf-bench pipeline, or compare --publish)"
        )
    with_sr = sum("success_rate" in r.data.metrics for r in found)
    evidence = (
        f"search_runs(filter_string=\"{BRIEF_FILTER}\") in experiment '{experiment}' returned "
        f"{len(found)} run(s), {with_sr} with success_rate"
        if with_sr
        else None
    )
    title = f"rlinf-bench: {training or experiment}"
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-report-videos-") as tmp:
        files = write_site(
            reports,
            Path(args.out),
            baselines=plot_baselines(reports, args.baseline),
            title=title,
            mlflow_evidence=evidence,
            files=MlflowRunFiles(client, Path(tmp)),
        )
    return reports, files


def _from_files(args: argparse.Namespace) -> tuple[list[CheckpointReport], SiteFiles]:
    """Offline: the same page from CheckpointReport JSON files (no tracking server involved)."""
    from rlinf_bench.errors import ConfigError

    given = [f for f, v in (("--tracking-uri", args.tracking_uri),) if v]
    if given:  # they say where to read MLflow, which --reports does not: refused rather than ignored
        raise ConfigError(f"{' and '.join(given)} and --reports exclude each other: --reports reads no MLflow")
    from rlinf_bench.baselines import get_baselines
    from rlinf_bench.contracts import CheckpointReport
    from rlinf_bench.reporting.plot import plot_baselines
    from rlinf_bench.reporting.site import write_site

    get_baselines(args.baseline)
    reports = [CheckpointReport.load(p) for p in args.reports]
    title = f"rlinf-bench: {args.training_experiment or args.experiment}"
    files = write_site(reports, Path(args.out), baselines=plot_baselines(reports, args.baseline), title=title)
    return reports, files
