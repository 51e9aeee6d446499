"""Run checkpoints through one embedded stack, in turn, and say where everything landed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.errors import ConfigError, RlinfBenchError
from rlinf_bench.reporting.text_safety import plain
from rlinf_bench.request_checks import validate_request
from rlinf_local.budget import SMALL_BUDGET_MAX_STEPS, small_matrix_yaml
from rlinf_local.embedded import Embedded, progress_line
from rlinf_local.inputs import LocalCheckpoint, local_checkpoint
from rlinf_local.origin import pipeline_origin, with_origin
from rlinf_local.pipeline_command import PipelineOutcome, StateFile, evaluate_checkpoint, require_config, write_report
from rlinf_local.policy_check import check_matrix_policy, rerun_command

__all__ = ["config_text_for", "print_outcome", "run_checkpoints", "run_pipeline", "with_budget", "with_policy"]


def config_text_for(
    config: Path | None,
    out: Path,
    budget: dict[str, int] | None = None,
    policy: str | None = None,
    *,
    command: str = "rlinf-bench pipeline",
) -> str:
    """The intake config's text: the file given, or the small budget (probes write under DIR/scratch).

    ``budget`` (``runs``, ``trials``, ``max_steps``, ``videos``: the ``--runs/--trials/--max-steps/--videos``
    flags that were given) overrides the matrix's ``runs``, ``trials_per_task``, every suite's ``max_steps``
    and ``videos``, so the common case needs no nested YAML; ``policy`` (``--policy``) overrides its ``policy``.
    The matrix records ``command`` and its levers as its origin (:mod:`rlinf_local.origin`), so a verdict's fix
    names what this user can change."""
    origin = pipeline_origin(command, config, budget, small_budget_steps=SMALL_BUDGET_MAX_STEPS)
    if config is None:
        text = small_matrix_yaml(out / "scratch", **(budget or {}))
        if budget:
            check_budget(text, budget, source="the small default budget")
    else:
        text = require_config(config)
        text = with_budget(text, budget, source=str(config)) if budget else text
    return with_origin(with_policy(text, policy), origin)


def with_policy(text: str, policy: str | None) -> str:
    """The intake config ``text`` evaluating ``policy`` (``--policy``; None keeps the config's)."""
    if policy is None:
        return text
    doc: dict[str, Any] = yaml.safe_load(text) or {}
    return str(yaml.safe_dump({**doc, "policy": policy}, sort_keys=False))


def with_budget(text: str, budget: dict[str, int], *, source: str) -> str:
    """The intake config ``text`` with the budget flags applied (checked again, naming the flags on a bad value)."""
    from rlinf_bench.intake.config import parse_config_text

    doc: dict[str, Any] = yaml.safe_load(text) or {}  # JSON is YAML too; require_config checked it is a mapping
    if "runs" in budget:
        doc["runs"] = budget["runs"]
    if "trials" in budget:
        doc["trials_per_task"] = budget["trials"]
    if "videos" in budget:
        doc["videos"] = budget["videos"]
    if "max_steps" in budget:
        # The suites as the config resolved them (a bare name, or the brief's four when none is listed).
        suites = parse_config_text(text, source=source).suites
        doc["suites"] = [
            {**s.model_dump(mode="json", exclude_none=True), "max_steps": budget["max_steps"]} for s in suites
        ]
    out = str(yaml.safe_dump(doc, sort_keys=False))
    check_budget(out, budget, source=source)
    return out


#: The checkpoint of the request the budget flags are checked on: the request's checks never read it.
_BUDGET_CHECKPOINT = CheckpointRef(
    uri="budget-check/checkpoints/global_step_0", experiment="budget-check", global_step=0
)
#: Where the stack fills what the deployment decides before Plan (rlinf_aws.state_plan.resolve_request).
_STACK_IMAGES = ("image", "robotwin_image", "probe_image")


def check_budget(text: str, budget: dict[str, int], *, source: str) -> None:
    """What the Plan state would refuse later (more trials than initial states...), refused now by the Plan's own
    check (:func:`~rlinf_bench.request_checks.validate_request`), naming the flags."""
    from rlinf_bench.intake.config import parse_config_text

    flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in budget.items())
    matrix = parse_config_text(text, source=f"{source} with {flags}")
    request = matrix.request_for(_BUDGET_CHECKPOINT)
    filled = {f: "filled-by-the-stack" for f in _STACK_IMAGES if not getattr(request, f).strip()}
    try:
        validate_request(request.model_copy(update=filled))
    except RlinfBenchError as exc:
        raise ConfigError(f"{flags} on {source}: {exc}") from exc


def run_checkpoints(emb: Embedded, checkpoints: list[LocalCheckpoint]) -> PipelineOutcome:
    """Evaluate each checkpoint in turn (the next one sees the previous in MLflow), then write the report."""
    state = StateFile(emb.out)
    outcome = PipelineOutcome(tracking_uri=emb.tracking_uri, out=str(emb.out))
    for ckpt in checkpoints:
        outcome.executions.append(evaluate_checkpoint(emb, ckpt, state))
    report = write_report(emb.out, emb.tracking_uri, s3_client=emb.aws.client("s3"), results_prefix=emb.results_prefix)
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
    policy: str | None = None,
    argv: Sequence[str] = (),
    verbose: bool = False,
) -> PipelineOutcome:
    """``rlinf-bench pipeline``: check the inputs (exit 2 before anything starts), deploy, evaluate, report.
    ``progress``: a live progress line on stderr while each execution runs (off under ``--json``);
    ``budget``: the ``--runs/--trials/--max-steps`` given (:func:`config_text_for`); ``policy``: ``--policy``,
    checked against each checkpoint's files first; ``argv``: the user's command, for the fixes messages print;
    ``verbose`` (``-v``): list the stack's adaptations for moto instead of counting them."""
    refs = [local_checkpoint(c) for c in checkpoints]
    text = config_text_for(config, out, budget, policy)
    check_matrix_policy(text, [r.path for r in refs], argv=argv)
    with Embedded(
        out,
        config_text=text,
        tracking_uri=tracking_uri,
        max_parallel=max_parallel,
        progress=progress,
        rerun_command=rerun_command(argv),
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
        progress_line(f"{where}: applied {len(changes)} adaptations of template.yaml for moto; -v lists them")
        return
    progress_line(f"{where}; the {len(changes)} adaptations of template.yaml for moto:")
    for a in changes:
        progress_line(f"  - {a.line()}")


def print_outcome(outcome: PipelineOutcome) -> None:
    for e in outcome.executions:
        verdict = f": {e.verdict}" if e.verdict else ""
        print(plain(f"{e.describe():<10} {e.name} ({e.runs_done} run(s) done, {e.runs_failed} failed){verdict}"))
    for f in outcome.failures:
        print(plain(f"  failed: {f.what}: {f.reason}"))  # a Job's cause: no escape sequence reaches the terminal
    from rlinf_local.closing_lines import closing_lines

    print("\n".join(closing_lines(outcome)))
