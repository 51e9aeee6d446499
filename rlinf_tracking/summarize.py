"""Aggregate and publish in one call, from result files: what `rlinf-bench compare --publish` runs.

RunResults (+ ProbeResults) of a checkpoint -> verdicts against baselines and the MLflow history ->
report on disk -> MLflow. The state machine does the same in two states (aggregate.py, publish.py),
from the Jobs' outcomes; this is the by-hand path for results already on disk or in S3.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rlinf_bench.baselines import get_baselines
from rlinf_bench.contracts import CheckpointReport, ProbeResult
from rlinf_bench.errors import TrackingUnavailableError
from rlinf_bench.reporting.episode_files import EpisodeFiles
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import VerdictConfig, apply_verdicts
from rlinf_tracking.mlflow_history import load_history
from rlinf_tracking.mlflow_publish import DEFAULT_EXPERIMENT, publish_checkpoint, write_local_artifacts
from rlinf_tracking.tracking_retry import RetryPolicy

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient


def summarize_and_publish(
    runs: Sequence[SourcedRun],
    *,
    client: MlflowClient,
    out_dir: Path,
    runs_expected: int = 3,
    baseline_names: Sequence[str] = (),
    probes: Sequence[ProbeResult] = (),
    experiment: str = DEFAULT_EXPERIMENT,
    cfg: VerdictConfig | None = None,
    artifact_location: str | None = None,
    retry: RetryPolicy | None = None,
    files: EpisodeFiles | None = None,
) -> CheckpointReport:
    """Aggregate, decide verdicts (previous/best read back from MLflow), write to disk, publish.

    The report lands in ``out_dir`` even when MLflow is unreachable; the TrackingUnavailableError
    raised then names the file. Baseline names are checked before anything else happens.
    """
    baselines = get_baselines(list(baseline_names))
    report = aggregate_checkpoint(runs, runs_expected=runs_expected)
    report.probes = list(probes)
    report.infra = infra_checks(report.probes)
    try:
        history = load_history(client, experiment, training_experiment=report.experiment or None, retry=retry)
    except TrackingUnavailableError as exc:
        apply_verdicts(report, baselines, (), cfg)
        paths = write_local_artifacts(report, out_dir, history=(), baselines=baselines)
        raise TrackingUnavailableError(
            f"{exc}. Verdicts vs previous/best are missing; the report is on disk: {paths.report_json}"
        ) from exc
    apply_verdicts(report, baselines, history, cfg)
    publish_checkpoint(
        report,
        client=client,
        out_dir=out_dir,
        history=history,
        baselines=baselines,
        experiment=experiment,
        artifact_location=artifact_location,
        retry=retry,
        files=files,
    )
    return report
