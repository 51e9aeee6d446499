"""Publish a CheckpointReport to MLflow: one parent run per checkpoint, one nested child per eval run.

The report is written to disk before MLflow is contacted, so an unreachable server costs the
publication, never the result. The MlflowClient is passed in (no global tracking URI).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlinf_bench.baselines import Baseline
from rlinf_bench.contracts import CheckpointReport, SuiteReport
from rlinf_bench.errors import TrackingUnavailableError
from rlinf_bench.reporting.episode_files import EpisodeFiles, StoredRunFiles
from rlinf_bench.reporting.format import VERDICT_MARK, headline, mean_std, verdict_against, verdict_note
from rlinf_bench.reporting.markdown import checkpoint_markdown
from rlinf_bench.reporting.plot import sr_vs_step_png
from rlinf_tracking import mlflow_names as names
from rlinf_tracking.mlflow_experiments import DEFAULT_EXPERIMENT, ensure_experiment
from rlinf_tracking.mlflow_models import CheckpointModels, registered_model_name
from rlinf_tracking.mlflow_robustness import robustness_metrics, robustness_tags
from rlinf_tracking.mlflow_videos import stage_videos
from rlinf_tracking.tracking_retry import RetryPolicy, call_tracking

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

MAX_PARAM_CHARS = 6000  # MLflow's limit on a param value
MAX_DESCRIPTION_CHARS = 5000  # a tag value holds 8000; the description is for reading, not for the whole report


@dataclass(frozen=True)
class LocalArtifacts:
    """The report files as written to disk (they survive a tracking failure)."""

    report_json: Path
    markdown: Path
    plot_png: Path
    #: the episode videos as (staged copy, artifact folder such as videos/libero_spatial/run0), read through
    #: rlinf_bench.named_files (never a path a result names, as it is)
    videos: Sequence[tuple[Path, str]] = ()


def write_local_artifacts(
    report: CheckpointReport, out_dir: Path, *, history: Sequence[CheckpointReport], baselines: Sequence[Baseline]
) -> LocalArtifacts:
    """Write the report JSON, its markdown and the SR-vs-step plot (history + this checkpoint); no video (they
    are staged where they are published, :func:`publish_checkpoint`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report.links["report_json"] = str(out_dir / names.REPORT_ARTIFACT)
    paths = LocalArtifacts(
        out_dir / names.REPORT_ARTIFACT, out_dir / names.MARKDOWN_ARTIFACT, out_dir / names.PLOT_ARTIFACT
    )
    report.save(paths.report_json)
    paths.markdown.write_text(checkpoint_markdown(report), encoding="utf-8")
    others = [h for h in history if h.checkpoint_uri != report.checkpoint_uri]
    paths.plot_png.write_bytes(
        sr_vs_step_png(
            [*others, report], baselines, title=f"{report.experiment or 'RLinf'}: success rate vs global step"
        )
    )
    return paths


def _suite_metrics(s: SuiteReport) -> dict[str, float]:
    out: dict[str, float] = {}
    for field in ("success_rate_mean", "success_rate_std", "ci95_low", "ci95_high", "wilson95_low", "wilson95_high"):
        value = getattr(s, field)
        if value is not None:
            key = "success_rate" if field == "success_rate_mean" else field
            out[names.metric_key(key, s.suite)] = float(value)
    out[names.metric_key("runs_completed", s.suite)] = float(s.runs_completed)
    out[names.metric_key("episodes", s.suite)] = float(s.episodes)
    for t in s.tasks:
        out[names.metric_key("success_rate", s.suite, t.task_name)] = t.success_rate_mean
    return out


def parent_params(report: CheckpointReport) -> dict[str, str]:
    """Params of the parent run; the brief's query finds parents by val_only = 'True'."""
    seeds = sorted({r.seed for s in report.suites for r in s.runs})
    trials = sorted({t.episodes // max(s.runs_completed, 1) for s in report.suites for t in s.tasks})
    return {
        names.PARAM_VAL_ONLY: "True",
        "task_suite_name": ",".join(s.suite for s in report.suites),
        "checkpoint": report.checkpoint_uri,
        "global_step": str(report.global_step if report.global_step is not None else ""),
        "policy": report.policy,
        "trials": ",".join(str(t) for t in trials),
        "runs": str(max((s.runs_expected for s in report.suites), default=0)),
        "seeds": ",".join(str(x) for x in seeds),
        "experiment": report.experiment,
        "baselines": ",".join(report.baselines),
    }


def parent_metrics(report: CheckpointReport) -> dict[str, float]:
    metrics: dict[str, float] = {}
    if report.success_rate is not None:
        metrics["success_rate"] = report.success_rate
    for s in report.suites:
        metrics.update(_suite_metrics(s))
    for c in report.infra:
        if c.value is not None:
            metrics[names.metric_key("infra", c.probe, c.metric)] = c.value
    metrics.update(robustness_metrics(report))
    return metrics


def run_description(report: CheckpointReport) -> str:
    """The run's description (markdown, shown on its Overview page): the headline, then each suite's SR and verdicts."""
    lines = [f"**{headline(report)}**", ""]
    for s in report.suites:
        lines.append(f"- {s.suite}: SR {mean_std(s)} over {s.runs_completed}/{s.runs_expected} runs")
        for v in s.verdicts:
            if v.task:
                continue
            note = verdict_note(v)
            lines.append(f"  - vs {verdict_against(v)}: {VERDICT_MARK[v.value]}" + (f" ({note})" if note else ""))
    return "\n".join(lines)[:MAX_DESCRIPTION_CHARS]


def parent_tags(report: CheckpointReport) -> dict[str, str]:
    tags = {
        names.TAG_DESCRIPTION: run_description(report),
        names.TAG_KIND: "checkpoint",
        names.TAG_REQUEST: report.request_id or report.checkpoint_uri,
        names.TAG_EXPERIMENT: report.experiment,
        names.TAG_COMPLETE: str(report.complete),
        names.TAG_VERDICT: headline(report),
    }
    for v in report.verdicts:
        against = v.against if v.kind == "baseline" else v.kind
        parts = ["verdict", v.suite, against] + ([v.task] if v.task else [])
        tags[names.metric_key(*parts)] = v.value.value
    tags.update(robustness_tags(report))
    return tags


class MlflowPublisher:
    """Writes parent + child runs; every server call goes through the bounded retry policy."""

    def __init__(
        self,
        client: MlflowClient,
        *,
        experiment: str = DEFAULT_EXPERIMENT,
        artifact_location: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.client = client
        self.experiment = experiment
        self.artifact_location = artifact_location
        self.retry = retry or RetryPolicy()
        self.target = str(client.tracking_uri)

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return call_tracking(lambda: fn(*args, **kwargs), what=what, target=self.target, policy=self.retry)

    def experiment_id(self) -> str:
        """The experiment's id; created (typed for classic ML, artifacts beside a local store) when missing."""
        return ensure_experiment(
            self.client, self.experiment, artifact_location=self.artifact_location, retry=self.retry
        )

    def _earlier(self, exp_id: str, request_id: str) -> list[str]:
        """Parent runs of earlier publications of the same checkpoint (at-least-once delivery, re-runs)."""
        safe = request_id.replace("'", "\\'")
        old = self._call(
            "look for an earlier publication",
            self.client.search_runs,
            [exp_id],
            filter_string=f"tags.`{names.TAG_REQUEST}` = '{safe}'",
        )
        return [str(r.info.run_id) for r in old]

    def _delete_with_children(self, exp_id: str, run_id: str) -> None:
        children = self._call(
            "find the earlier publication's eval runs",
            self.client.search_runs,
            [exp_id],
            filter_string=f"tags.mlflow.parentRunId = '{run_id}'",
        )
        for child in children:
            self._call("delete an earlier eval run", self.client.delete_run, child.info.run_id)
        self._call("delete an earlier publication", self.client.delete_run, run_id)

    def publish(self, report: CheckpointReport, artifacts: LocalArtifacts) -> str:
        """Create the parent run (params, metrics, tags, artifacts) and one child per eval run; return its id."""
        from mlflow.entities import Metric, Param, RunTag

        exp_id = self.experiment_id()
        models = CheckpointModels(self.client, mlflow_experiment=self.experiment, retry=self.retry)
        request_id = report.request_id or report.checkpoint_uri
        earlier = self._earlier(exp_id, request_id)
        step = report.global_step or 0
        now = int(time.time() * 1000)
        run_name = f"{report.experiment or 'checkpoint'}/global_step_{step}"
        parent = self._call("create the parent run", self.client.create_run, exp_id, run_name=run_name)
        pid = parent.info.run_id
        model_id = models.create(exp_id, pid, report)
        self._log_chunked(
            pid,
            metrics=[Metric(k, v, now, step, model_id=model_id) for k, v in parent_metrics(report).items()],
            params=[Param(k, v[:MAX_PARAM_CHARS]) for k, v in parent_params(report).items()],
            tags=[RunTag(k, v) for k, v in parent_tags(report).items()],
        )
        for s in report.suites:
            for r in s.runs:
                self._child(exp_id, pid, report, s, r, step, now)
        report.links["mlflow_run"] = pid
        report.links["mlflow_model"] = model_id
        # Re-write the JSON so the copy in MLflow knows its own run id.
        report.save(artifacts.report_json)
        for path in (artifacts.report_json, artifacts.markdown, artifacts.plot_png):
            self._call(f"upload {path.name}", self.client.log_artifact, pid, str(path))
        for video, folder in artifacts.videos:  # played in the MLflow UI's artifact view
            self._call(f"upload {folder}/{video.name}", self.client.log_artifact, pid, str(video), folder)
        status = "FINISHED" if report.complete else "FAILED"
        self._call("close the parent run", self.client.set_terminated, pid, status)
        models.finish(pid, model_id, report)
        # Only now that the new publication is whole do the earlier ones go: a failure above leaves them.
        for run_id in earlier:
            log.info("replacing earlier publication %s of %s with %s", run_id, request_id, pid)
            models.delete_for_run(run_id)
            self._delete_with_children(exp_id, run_id)
        if earlier:
            models.move_best_alias(registered_model_name(self.experiment, report.experiment))
        return str(pid)

    def _log_chunked(self, run_id: str, *, metrics: list[Any], params: list[Any], tags: list[Any]) -> None:
        """log_batch in pieces: a request takes at most 1000 metrics, 100 params and 100 tags
        (LIBERO-90 alone has 90 per-task metrics; per-task verdict tags add up)."""
        while metrics or params or tags:
            self._call(
                "log the parent run",
                self.client.log_batch,
                run_id,
                metrics=metrics[:1000],
                params=params[:100],
                tags=tags[:100],
            )
            metrics, params, tags = metrics[1000:], params[100:], tags[100:]

    def _child(
        self, exp_id: str, pid: str, report: CheckpointReport, s: SuiteReport, r: Any, step: int, now: int
    ) -> None:
        from mlflow.entities import Metric, Param, RunTag

        # Children carry no val_only param, so the brief's query returns parents only.
        child = self._call(
            "create a child run",
            self.client.create_run,
            exp_id,
            run_name=f"{s.suite}/run{r.run_index}",
            tags={"mlflow.parentRunId": pid, names.TAG_KIND: "eval_run", names.TAG_EXPERIMENT: report.experiment},
        )
        metrics = [Metric("episodes", float(r.episodes), now, step)]
        if r.success_rate is not None:
            metrics.append(Metric("success_rate", r.success_rate, now, step))
        params = {
            "suite": s.suite,
            "run_index": str(r.run_index),
            "seed": str(r.seed),
            "status": r.status.value,
            "source": r.source,
        }
        tags = [RunTag("error", (r.error or "")[:5000])] if r.error else []
        self._call(
            "log a child run",
            self.client.log_batch,
            child.info.run_id,
            metrics=metrics,
            params=[Param(k, v) for k, v in params.items()],
            tags=tags,
        )
        status = "FINISHED" if r.status.value == "complete" else "FAILED"
        self._call("close a child run", self.client.set_terminated, child.info.run_id, status)


def publish_checkpoint(
    report: CheckpointReport,
    *,
    client: MlflowClient,
    out_dir: Path,
    history: Sequence[CheckpointReport] = (),
    baselines: Sequence[Baseline] = (),
    experiment: str = DEFAULT_EXPERIMENT,
    artifact_location: str | None = None,
    retry: RetryPolicy | None = None,
    files: EpisodeFiles | None = None,
) -> str:
    """Write the report to ``out_dir``, then publish it; on an unreachable server the files stay and the
    raised TrackingUnavailableError says where they are. ``files`` reads the episode videos uploaded with it
    (default: where the runs stored them, each from inside the folder of its RunResult)."""
    artifacts = write_local_artifacts(report, out_dir, history=history, baselines=baselines)
    publisher = MlflowPublisher(client, experiment=experiment, artifact_location=artifact_location, retry=retry)
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-videos-") as tmp:
        videos = stage_videos(report, Path(tmp), files or StoredRunFiles())
        try:
            return publisher.publish(report, replace(artifacts, videos=videos))
        except TrackingUnavailableError as exc:
            raise TrackingUnavailableError(f"{exc}. The report is on disk: {artifacts.report_json}") from exc
