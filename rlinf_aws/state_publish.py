"""The publish state: the stored report -> an MLflow parent run (+ one child per eval run) and one SNS message.

MLflow comes first, through bounded retries. If it stays unreachable the SNS message still goes out
and says "MLflow publish failed: ..." at its top: the report is in the results store either way, so
nothing is lost. Only a failed SNS publish fails the state (and the execution's failure branch then
tries SNS once more with the failure notice).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlinf_aws.report_link import report_url
from rlinf_aws.sent_summaries import SentSummaries, summary_key
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.layout import ENTRY_PAGE, REPORT_JSON, report_prefix
from rlinf_bench.contracts.workflow import AggregateResult, PublishResult
from rlinf_bench.document_store import Storage, join
from rlinf_bench.redaction import redact
from rlinf_bench.reporting.messages import Notification, sns_message, summary_notification

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

__all__ = ["publish", "publish_to_mlflow", "send"]


def publish_to_mlflow(
    report: CheckpointReport,
    report_uri: str,
    *,
    client: MlflowClient,
    experiment: str,
    storage: Storage,
    results_root: str | None,
) -> str:
    """Publish the stored report files as they are (no second rendering); returns the parent run id. The
    videos are read from inside each run's folder under ``results_root`` (the request's), whatever the stored
    report names (None, for an input without it: the folder each run's result was read from)."""
    from rlinf_bench.reporting.episode_files import StoredRunFiles
    from rlinf_tracking.mlflow_publish import LocalArtifacts, MlflowPublisher
    from rlinf_tracking.mlflow_videos import stage_videos

    prefix = report_uri.rsplit("/", 1)[0]
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-publish-") as tmp:
        paths = {}
        for name in ("checkpoint_report.json", "report.md", "sr_vs_step.png"):
            paths[name] = Path(tmp) / name
            paths[name].write_bytes(storage.read_bytes(f"{prefix}/{name}"))
        videos = stage_videos(report, Path(tmp), StoredRunFiles(storage, results_root=results_root))
        artifacts = LocalArtifacts(
            paths["checkpoint_report.json"], paths["report.md"], paths["sr_vs_step.png"], videos=videos
        )
        return MlflowPublisher(client, experiment=experiment).publish(report, artifacts)


def _results_root(inp: AggregateResult) -> str | None:
    """The checkpoint's results root from the state input (never from the stored report)."""
    if inp.result_root:
        return inp.result_root
    tail = f"/report/{REPORT_JSON}"
    return inp.report_uri[: -len(tail)] if inp.report_uri.endswith(tail) else None


def send(note: Notification, *, sns: Any, topic_arn: str) -> str:
    """Publish one notification to the results topic; returns the SNS message id."""
    response = sns.publish(TopicArn=topic_arn, **sns_message(note))
    return str(response.get("MessageId", ""))


def publish(
    inp: AggregateResult,
    *,
    storage: Storage,
    sns: Any,
    topic_arn: str,
    mlflow: Callable[[], MlflowClient] | None = None,
    experiment: str = "RLinf",
    report_html: str = "",
    sent: SentSummaries | None = None,
) -> PublishResult:
    """MLflow (when configured), then the one summary message; MLflow failures are reported, not raised.

    The message links the report once: a presigned HTTPS URL of the stored page, or ``report_html`` (the
    embedded default's local page). The URL expires, so it goes into the message only, never the stored report.
    With ``sent`` (the embedded default's log), a summary already sent for this checkpoint with the same
    content is not sent again: ``already_sent`` says when it went out.
    """
    report = CheckpointReport.read(inp.report_uri, storage=storage)
    root = _results_root(inp)
    if root is not None and report.links.get("report_site"):
        # The page to sign is where the aggregator put it, from the request: the stored report is data.
        report.links["report_site"] = join(report_prefix(root), "site", ENTRY_PAGE)
    run_id: str | None = None
    mlflow_error = ""
    if mlflow is None:
        mlflow_error = "no MLflow tracking URI configured (set MLFLOW_TRACKING_URI)"
    else:
        try:
            run_id = publish_to_mlflow(
                report,
                inp.report_uri,
                client=mlflow(),
                experiment=experiment,
                storage=storage,
                results_root=root,
            )
        except Exception as exc:  # any MLflow failure must still let the email and Slack message out
            log.exception("MLflow publish failed")
            mlflow_error = redact(f"{type(exc).__name__}: {exc}")  # it goes into the message and the log
    if run_id:
        report.links["mlflow_run"] = run_id
        storage.write_text(inp.report_uri, report.to_json())
    url = report_url(report, storage, local_html=report_html)
    if url:
        report.links = {**report.links, "report_url": url}
    note = summary_notification(report, failed_runs=inp.failed_runs, notes=inp.notes, mlflow_error=mlflow_error)
    key = summary_key(report, [*inp.failed_runs, *inp.notes, mlflow_error])
    earlier = sent.find(key) if sent is not None else None
    if earlier is not None:
        log.debug("summary for %s already sent (%s): not sent again", report.checkpoint_uri, earlier.describe())
        message_id = ""
    else:
        message_id = send(note, sns=sns, topic_arn=topic_arn)
        if sent is not None:
            sent.record(key, checkpoint=report.checkpoint_uri, subject=note.subject, message_id=message_id)
    return PublishResult(
        report_uri=inp.report_uri,
        mlflow_run_id=run_id,
        mlflow_error=mlflow_error,
        message_id=message_id,
        email_subject=note.subject,
        already_sent=earlier.describe() if earlier is not None else "",
    )
