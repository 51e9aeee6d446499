"""Read earlier checkpoints back from MLflow: the history that previous / best verdicts and reports use."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlinf_bench.contracts import CheckpointReport
from rlinf_tracking import mlflow_names as names
from rlinf_tracking.tracking_retry import RetryPolicy, call_tracking

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

BRIEF_FILTER = "params.val_only = 'True'"


def search_checkpoint_runs(
    client: MlflowClient, experiment: str, *, training_experiment: str | None = None, retry: RetryPolicy | None = None
) -> list[Any]:
    """Parent runs, found with the brief's own filter (plus the training experiment when given), all pages."""
    policy = retry or RetryPolicy()
    target = str(client.tracking_uri)
    exp = call_tracking(
        lambda: client.get_experiment_by_name(experiment), what="find the experiment", target=target, policy=policy
    )
    if exp is None:
        return []
    flt = BRIEF_FILTER
    if training_experiment:
        flt += f" and tags.`{names.TAG_EXPERIMENT}` = '{training_experiment.replace(chr(39), chr(92) + chr(39))}'"
    runs: list[Any] = []
    token: str | None = None
    while True:
        page = call_tracking(
            functools.partial(
                client.search_runs, [exp.experiment_id], filter_string=flt, max_results=1000, page_token=token
            ),
            what="search checkpoint runs",
            target=target,
            policy=policy,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def load_history(
    client: MlflowClient, experiment: str, *, training_experiment: str | None = None, retry: RetryPolicy | None = None
) -> list[CheckpointReport]:
    """Every published CheckpointReport of the experiment (from the parent runs' JSON artifact)."""
    policy = retry or RetryPolicy()
    target = str(client.tracking_uri)
    reports = []
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-history-") as tmp:
        for run in search_checkpoint_runs(client, experiment, training_experiment=training_experiment, retry=policy):
            rid = run.info.run_id
            dst = Path(tmp) / rid
            dst.mkdir()
            local = call_tracking(
                functools.partial(client.download_artifacts, rid, names.REPORT_ARTIFACT, str(dst)),
                what=f"download the report of run {rid}",
                target=target,
                policy=policy,
            )
            report = CheckpointReport.load(local)
            report.links["mlflow_run"] = rid
            reports.append(report)
    return sorted(reports, key=lambda r: r.global_step if r.global_step is not None else -1)
