"""Run checkpoints through one embedded stack, in turn, and say where everything landed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from rlinf_bench.errors import ConfigError, RlinfBenchError
from rlinf_bench.reporting.text_safety import plain
from rlinf_bench.request_checks import check_suite
from rlinf_local.budget import small_matrix_yaml
from rlinf_local.embedded import Embedded
from rlinf_local.inputs import LocalCheckpoint, local_checkpoint
from rlinf_local.pipeline_command import PipelineOutcome, StateFile, evaluate_checkpoint, require_config, write_report

__all__ = ["config_text_for", "print_outcome", "run_checkpoints", "run_pipeline", "with_budget"]


def config_text_for(config: Path | None, out: Path, budget: dict[str, int] | None = None) -> str:
    """The intake config's text: the file given, or the small budget (probes write under DIR/scratch).

    ``budget`` (``runs``, ``trials``, ``max_steps``: the ``--runs/--trials/--max-steps`` flags that were
    given) overrides the matrix's ``runs``, ``trials_per_task`` and every suite's ``max_steps``, so the
    common case needs no nested YAML."""
    if config is None:
        text = small_matrix_yaml(out / "scratch", **(budget or {}))
        if budget:
            check_budget(text, budget, source="the small default budget")
        return text
    text = require_config(config)
    return with_budget(text, budget, source=str(config)) if budget else text


def with_budget(text: str, budget: dict[str, int], *, source: str) -> str:
    """The intake config ``text`` with the budget flags applied (checked again, naming the flags on a bad value)."""
    from rlinf_bench.intake.config import parse_config_text

    doc: dict[str, Any] = yaml.safe_load(text) or {}  # JSON is YAML too; require_config checked it is a mapping
    if "runs" in budget:
        doc["runs"] = budget["runs"]
    if "trials" in budget:
        doc["trials_per_task"] = budget["trials"]
    if "max_steps" in budget:
        # The suites as the config resolved them (a bare name, or the brief's four when none is listed).
        suites = parse_config_text(text, source=source).suites
        doc["suites"] = [
            {**s.model_dump(mode="json", exclude_none=True), "max_steps": budget["max_steps"]} for s in suites
        ]
    out = str(yaml.safe_dump(doc, sort_keys=False))
    check_budget(out, budget, source=source)
    return out


def check_budget(text: str, budget: dict[str, int], *, source: str) -> None:
    """What the Plan state would refuse later (more trials than initial states...), refused now, naming the flags."""
    from rlinf_bench.intake.config import parse_config_text

    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in budget.items())
    matrix = parse_config_text(text, source=f"{source} with {flags}")
    for suite in matrix.suites:
        try:
            check_suite(suite.name, suite.tasks, matrix.trials_per_task, where=f"suites[{suite.name}]")
        except RlinfBenchError as exc:
            raise ConfigError(f"{flags} on {source}: {exc}") from exc


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
    budget: dict[str, int] | None = None,
    verbose: bool = False,
) -> PipelineOutcome:
    """``rlinf-bench pipeline``: check the inputs (exit 2 before anything starts), deploy, evaluate, report.
    ``progress``: a live progress line on stderr while each execution runs (off under ``--json``);
    ``budget``: the ``--runs/--trials/--max-steps`` given (:func:`config_text_for`); ``verbose`` (``-v``):
    list the stack's adaptations for moto instead of counting them."""
    refs = [local_checkpoint(c) for c in checkpoints]
    text = config_text_for(config, out, budget)
    with Embedded(
        out, config_text=text, tracking_uri=tracking_uri, max_parallel=max_parallel, progress=progress
    ) as emb:
        print_adaptations(emb, verbose=verbose)
        outcome = run_checkpoints(emb, refs)
    print_outcome(outcome)
    return outcome


def print_adaptations(emb: Embedded, *, verbose: bool = False) -> None:
    """On stderr (how the stack was made, not a result): how many changes moto needed, or with ``verbose``
    each one and why (docs/embedded.md, "Adaptations for moto", has the same list)."""
    changes = emb.stack.adaptations
    where = f"local stack from template.yaml in moto at {emb.aws.endpoint}"
    if not verbose:
        print(f"{where}: applied {len(changes)} adaptations of template.yaml for moto; -v lists them", file=sys.stderr)
        return
    print(f"{where}; the {len(changes)} adaptations of template.yaml for moto:", file=sys.stderr)
    for a in changes:
        print(f"  - {a.line()}", file=sys.stderr)


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
