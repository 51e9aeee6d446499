"""``rlinf-bench pipeline``: one checkpoint through the whole flow on this machine, and what it leaves in DIR.

DIR holds: ``mlflow.db`` (the MLflow store), ``report/report.html``, ``outbox/email/*.txt`` and
``outbox/slack/*.json``, ``results/`` (RunResults and ProbeResults, copied out of the local bucket so a
re-run resumes from them), ``reports/<execution>.json`` (each CheckpointReport), ``jobs/`` (each Job's
log) and ``state.json`` (every execution and what it came to; ``rlinf-bench status --out DIR`` reads it).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.errors import ConfigError
from rlinf_local.embedded import Embedded
from rlinf_local.eta import EtaEstimate
from rlinf_local.executions import ExecutionSummary, Failure, summarize_execution
from rlinf_local.inputs import LocalCheckpoint, with_user_paths
from rlinf_local.live_progress import ProgressLine, read_progress

__all__ = ["PipelineOutcome", "StateFile", "evaluate_checkpoint", "follow", "write_report"]

STATE_FILE = "state.json"
log = logging.getLogger(__name__)


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executions: list[ExecutionSummary] = Field(default_factory=list)


class StateFile:
    """``DIR/state.json``: every execution this DIR has seen, written atomically after each change."""

    def __init__(self, out: Path) -> None:
        self.path = out / STATE_FILE
        self.state = _State.model_validate_json(self.path.read_text()) if self.path.exists() else _State()

    def put(self, summary: ExecutionSummary) -> None:
        self.state.executions = [e for e in self.state.executions if e.name != summary.name] + [summary]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(self.state.model_dump_json(indent=2) + "\n")
        tmp.replace(self.path)

    def finished(self, checkpoint_uri: str) -> ExecutionSummary | None:
        """The execution that already evaluated this checkpoint to the end (succeeded or failed), if any."""
        for e in self.state.executions:
            if e.checkpoint.get("uri") == checkpoint_uri and e.status in ("SUCCEEDED", "FAILED", "TIMED_OUT"):
                return e
        return None


@dataclass
class PipelineOutcome:
    """What ``--json`` prints."""

    executions: list[ExecutionSummary] = field(default_factory=list)
    tracking_uri: str = ""
    report: str = ""
    email: list[str] = field(default_factory=list)
    slack: list[str] = field(default_factory=list)
    out: str = ""  # DIR, for the commands the closing lines print (not in --json: the user gave it)

    @property
    def failures(self) -> list[Failure]:
        return [f for e in self.executions for f in e.failures]

    @property
    def ok(self) -> bool:
        """Every execution succeeded with no failed run, probe or publish (exit 0 only then)."""
        return bool(self.executions) and all(e.outcome == "SUCCEEDED" for e in self.executions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "executions": [e.public() for e in self.executions],
            "tracking_uri": self.tracking_uri,
            "report": self.report,
            "outbox": {"email": self.email, "slack": self.slack},
            "failures": [f.model_dump() for f in self.failures],
        }


def evaluate_checkpoint(emb: Embedded, ckpt: LocalCheckpoint, state: StateFile) -> ExecutionSummary:
    """Put the checkpoint into the bucket, let the router start its execution, and follow it to the end."""
    known = set(emb.executions())
    uri = emb.put_checkpoint(ckpt)
    emb.echo(f"uploaded {ckpt.path} -> {uri}; the router is deciding")
    started = emb.route_until_started(known)
    name, arn = next(iter(started.items()))
    return follow(emb, name, arn, state)


def follow(emb: Embedded, name: str, arn: str, state: StateFile) -> ExecutionSummary:
    """Wait for one execution, keep its report and state; on Ctrl-C stop its Jobs, save, mark it INTERRUPTED."""
    sfn = emb.aws.client("stepfunctions")
    request = json.loads(sfn.describe_execution(executionArn=arn)["input"])
    running = ExecutionSummary(name=name, status="RUNNING", checkpoint=request["checkpoint"], execution_arn=arn)
    state.put(running)
    emb.echo(f"execution {name} started: Jobs run under {emb.out / 'jobs'}")
    line = ProgressLine(enabled=emb.show_progress)
    try:
        emb.wait(arn, on_poll=_progress_tick(emb, arn, running, state, line))
    except KeyboardInterrupt:
        line.close()
        emb.interrupt(arn)
        emb.save_results()
        interrupted = summarize_execution(sfn, arn)
        interrupted.status = "INTERRUPTED"
        state.put(interrupted)
        raise
    line.close()
    emb.save_results()
    summary = summarize_execution(sfn, arn)
    # A Job names the checkpoint by the bucket's copy or its own download of it: name the user's folder.
    summary.failures = [
        f.model_copy(update={"reason": with_user_paths(f.reason, emb.uploaded_from)}) for f in summary.failures
    ]
    if summary.report_uri:
        try:
            report = emb.read_json(summary.report_uri)
        except Exception as exc:  # the report is in S3 unless the aggregator failed to write it
            summary.failures.append(Failure(what="report", reason=f"cannot read {summary.report_uri}: {exc}"))
        else:
            target = emb.out / "reports" / f"{name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(report, indent=2) + "\n")
    emb.email.drain()
    state.put(summary)
    emb.echo(f"execution {name}: {summary.describe()} {summary.verdict}")
    if summary.already_sent:
        emb.echo(f"email and Slack for {summary.checkpoint.get('uri', name)}: not sent again, {summary.already_sent}")
    return summary


def _progress_tick(
    emb: Embedded, arn: str, running: ExecutionSummary, state: StateFile, line: ProgressLine, every_s: float = 2.0
) -> Callable[[], None]:
    """What each poll of a running execution does: read its progress (every ``every_s``), show it, keep it in
    ``state.json`` so ``status`` counts from the live execution; the ETA comes from the readings so far."""
    sfn, s3 = emb.aws.client("stepfunctions"), emb.aws.client("s3")
    last = [0.0]
    eta = EtaEstimate()

    def tick() -> None:
        if time.monotonic() - last[0] < every_s:
            return
        last[0] = time.monotonic()
        try:
            progress = read_progress(sfn, s3, arn)
        except Exception as exc:  # progress is a courtesy: the execution goes on without it
            log.debug("progress of %s: %s", arn, exc)
            return
        if progress is None:
            return
        progress.eta_s = eta.update(progress.elapsed_s, progress.episodes_done, progress.episodes_total)
        line.show(progress)
        if progress != running.progress:
            running.progress = progress
            running.runs_done = progress.runs_finished
            state.put(running)

    return tick


def write_report(out: Path, tracking_uri: str, *, s3_client: Any = None, results_prefix: str | None) -> Path | None:
    """``DIR/report/report.html`` from every CheckpointReport under DIR/reports (None when there is none).

    With ``s3_client`` (the embedded stack's), the recorded videos in its bucket are copied next to the
    task pages, so they outlive the in-memory bucket; each only from inside the folder its run's result was
    read from, itself inside ``results_prefix`` (the stack's results: a report is data and may say anything;
    None only for local results), through :mod:`rlinf_bench.named_files`; a refused one is named on its task
    page."""
    from rlinf_aws.s3_objects import S3Objects
    from rlinf_bench.contracts import CheckpointReport
    from rlinf_bench.document_store import Storage
    from rlinf_bench.reporting.episode_files import StoredRunFiles
    from rlinf_bench.reporting.plot import plot_baselines
    from rlinf_bench.reporting.site import write_site

    paths = sorted((out / "reports").glob("*.json"))
    if not paths:
        return None
    reports = [CheckpointReport.load(p) for p in paths]
    experiments = sorted({r.experiment for r in reports if getattr(r, "experiment", None)})
    title = f"rlinf-bench: {', '.join(experiments) or 'embedded default'}"
    files = write_site(
        reports,
        out / "report",
        baselines=plot_baselines(reports, []),
        title=title,
        mlflow_evidence=_mlflow_evidence(tracking_uri),
        files=StoredRunFiles(None if s3_client is None else Storage(S3Objects(s3_client)), within=results_prefix),
    )
    _add_backlog_section(Path(files.html), out, {r.checkpoint_uri.rstrip("/") for r in reports})
    return Path(files.html)


def _add_backlog_section(html: Path, out: Path, reported: set[str]) -> None:
    """The report's "held / superseded checkpoints" section, from DIR/backlog.json (nothing when none); a
    checkpoint reported since is recorded there as backfilled."""
    from rlinf_bench.reporting.backlog_section import with_backlog_section
    from rlinf_local.backlog_status import mark_evaluated, read_backlog, save_backlog

    rows = read_backlog(out)
    if not rows:
        return
    marked = mark_evaluated(rows, reported)
    if marked != rows:
        save_backlog(out, marked)
    html.write_text(with_backlog_section(html.read_text(), marked))


def _mlflow_evidence(tracking_uri: str) -> str | None:
    """The brief's MLflow query, run against the store the publisher wrote to (evidence for the checklist)."""
    try:
        from mlflow.tracking import MlflowClient

        from rlinf_tracking import BRIEF_FILTER, search_checkpoint_runs

        found = search_checkpoint_runs(MlflowClient(tracking_uri), "RLinf")
    except Exception:  # the report still renders; the checklist then says MLflow was not checked
        return None
    with_sr = sum("success_rate" in r.data.metrics for r in found)
    if not with_sr:
        return None
    return f'search_runs(filter_string="{BRIEF_FILTER}") returned {len(found)} run(s), {with_sr} with success_rate'


def require_config(path: Path | None) -> str:
    """The intake config's text (the eval matrix), or a ConfigError naming the file."""
    if path is None:
        return ""
    if not path.is_file():
        raise ConfigError(f"--config {path} does not exist; give a YAML or JSON intake config (docs/intake.md)")
    from rlinf_bench.intake.config import parse_config_text

    text = path.read_text()
    parse_config_text(text, source=str(path))  # a bad field fails here, naming it, before anything starts
    return text
