"""Run checkpoints through one embedded stack, in turn, and say where everything landed."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.reporting.text_safety import plain
from rlinf_local.budget import small_matrix_yaml
from rlinf_local.embedded import Embedded
from rlinf_local.inputs import LocalCheckpoint, local_checkpoint
from rlinf_local.pipeline_command import PipelineOutcome, StateFile, evaluate_checkpoint, require_config, write_report

__all__ = ["config_text_for", "print_outcome", "run_checkpoints", "run_pipeline"]


def config_text_for(config: Path | None, out: Path) -> str:
    """The intake config's text: the file given, or the small budget (probes write under DIR/scratch)."""
    return require_config(config) if config is not None else small_matrix_yaml(out / "scratch")


def run_checkpoints(emb: Embedded, checkpoints: list[LocalCheckpoint]) -> PipelineOutcome:
    """Evaluate each checkpoint in turn (the next one sees the previous in MLflow), then write the report."""
    state = StateFile(emb.out)
    outcome = PipelineOutcome(tracking_uri=emb.tracking_uri)
    for ckpt in checkpoints:
        outcome.executions.append(evaluate_checkpoint(emb, ckpt, state))
    report = write_report(emb.out, emb.tracking_uri, s3_client=emb.aws.client("s3"))
    outcome.report = str(report) if report else ""
    outcome.email = [str(p) for p in emb.email.written]
    outcome.slack = [str(p) for p in emb.slack.written]
    return outcome


def run_pipeline(
    checkpoints: list[str],
    *,
    out: Path,
    config: Path | None = None,
    tracking_uri: str = "",
    max_parallel: int = 2,
    progress: bool = True,
) -> PipelineOutcome:
    """``rlinf-bench pipeline``: check the inputs (exit 2 before anything starts), deploy, evaluate, report.
    ``progress``: a live progress line on stderr while each execution runs (off under ``--json``)."""
    refs = [local_checkpoint(c) for c in checkpoints]
    text = config_text_for(config, out)
    with Embedded(
        out, config_text=text, tracking_uri=tracking_uri, max_parallel=max_parallel, progress=progress
    ) as emb:
        print_adaptations(emb)
        outcome = run_checkpoints(emb, refs)
    print_outcome(outcome)
    return outcome


def print_adaptations(emb: Embedded) -> None:
    print(f"local stack from template.yaml (samtranslator), moto at {emb.aws.endpoint}; adaptations for moto:")
    for a in emb.stack.adaptations:
        print(f"  - {a.line()}")


def print_outcome(outcome: PipelineOutcome) -> None:
    for e in outcome.executions:
        verdict = f": {e.verdict}" if e.verdict else ""
        print(plain(f"{e.describe():<10} {e.name} ({e.runs_done} run(s) done, {e.runs_failed} failed){verdict}"))
    for f in outcome.failures:
        print(plain(f"  failed: {f.what}: {f.reason}"))  # a Job's cause: no escape sequence reaches the terminal
    print(f"report:   {outcome.report or '(none: no execution produced a report)'}")
    print(f"mlflow:   mlflow ui --backend-store-uri {outcome.tracking_uri}")
    print(f"email:    {len(outcome.email)} message(s) {' '.join(outcome.email)}")
    print(f"slack:    {len(outcome.slack)} payload(s) {' '.join(outcome.slack)}")
