"""What ``pipeline``, ``demo``, ``watch`` and ``backfill`` print last: where everything landed, and the
commands to look at it, each runnable as printed in the user's shell.

The commands are the project's (``rlinf-bench``, ``mlflow``): when the venv they live in is not on the
user's PATH (``make demo`` runs ``.venv/bin/rlinf-bench``), the first line says how to put it there. The
``mlflow ui`` line is printed only when something was published to the local store.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from rlinf_bench.reporting.text_safety import plain
from rlinf_local.pipeline_command import PipelineOutcome

__all__ = ["activation_line", "closing_lines", "published_runs"]

#: Where ``mlflow ui`` serves by default.
MLFLOW_UI_URL = "http://127.0.0.1:5000"


def activation_line(path_env: str | None = None, cwd: Path | None = None) -> str:
    """``source .venv/bin/activate`` for the venv this command runs in, when its ``bin`` is not on PATH ("" when
    it is, or when this is no venv); the path is relative to the working directory when it lies below it."""
    if sys.prefix == sys.base_prefix:
        return ""
    bin_dir = Path(sys.prefix) / "bin"
    path = os.environ.get("PATH", "") if path_env is None else path_env
    if any(p and Path(p).resolve() == bin_dir.resolve() for p in path.split(os.pathsep)):
        return ""
    activate = bin_dir / "activate"
    here = (cwd or Path.cwd()).resolve()
    shown = activate.relative_to(here) if activate.is_relative_to(here) else activate
    return f"source {shlex.quote(str(shown))}"


def published_runs(outcome: PipelineOutcome) -> int:
    """How many executions logged their run to MLflow."""
    return sum(1 for e in outcome.executions if e.mlflow_run_id)


def closing_lines(outcome: PipelineOutcome) -> list[str]:
    """Where the report, the notifications and the MLflow runs are; then the commands to look at them."""
    lines = [f"report:   {outcome.report or '(none: no execution produced a report)'}"]
    lines.append(f"email:    {len(outcome.email)} message(s) {' '.join(outcome.email)}".rstrip())
    lines.append(f"slack:    {len(outcome.slack)} payload(s) {' '.join(outcome.slack)}".rstrip())
    runs = published_runs(outcome)
    local_store = outcome.tracking_uri.startswith("sqlite:")
    if not runs:
        lines.append("mlflow:   nothing published (no execution reached the publisher)")
    else:
        lines.append(f"mlflow:   {runs} checkpoint run(s) published to {outcome.tracking_uri} (experiment RLinf)")
    commands = [f"rlinf-bench status --out {shlex.quote(outcome.out)}"] if outcome.out else []
    if runs and local_store:
        ui = f"mlflow ui --backend-store-uri {shlex.quote(outcome.tracking_uri)}"
        commands.append(f"{ui}     # then open {MLFLOW_UI_URL}")
    if commands:
        activate = activation_line()
        lines.append("next, in your shell:")
        lines += [f"  {activate}     # once per shell: puts rlinf-bench and mlflow on PATH"] if activate else []
        lines += [f"  {c}" for c in commands]
    return [plain(line) for line in lines]
