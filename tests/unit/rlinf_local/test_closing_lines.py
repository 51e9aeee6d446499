"""The closing lines of pipeline, demo, watch and backfill: the commands they print run in the user's shell as
printed (the venv's activation first when it is not on PATH), and ``mlflow ui`` only when something was
published to the local store."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rlinf_local.closing_lines import activation_line, closing_lines
from rlinf_local.executions import ExecutionSummary
from rlinf_local.pipeline_command import PipelineOutcome

DB = "sqlite:///demo-out/mlflow.db"


def outcome(*, published: bool, tracking_uri: str = DB) -> PipelineOutcome:
    run = ExecutionSummary(name="demo-s100-a1", status="SUCCEEDED", mlflow_run_id="r1" if published else None)
    return PipelineOutcome(executions=[run], tracking_uri=tracking_uri, out="demo-out")


def test_given_published_runs_in_the_local_store_then_mlflow_ui_is_printed_with_its_store() -> None:
    lines = closing_lines(outcome(published=True))

    assert any(line.strip().startswith(f"mlflow ui --backend-store-uri {DB}") for line in lines)
    assert "  rlinf-bench status --out demo-out" in lines


def test_given_nothing_published_then_no_mlflow_ui_line_and_it_says_so() -> None:
    lines = closing_lines(outcome(published=False))

    assert not any("mlflow ui" in line for line in lines)
    assert "mlflow:   nothing published (no execution reached the publisher)" in lines


def test_given_a_tracking_server_then_it_is_named_and_no_local_ui_is_offered() -> None:
    lines = closing_lines(outcome(published=True, tracking_uri="http://mlflow:5000"))

    assert not any("mlflow ui" in line for line in lines) and any("http://mlflow:5000" in line for line in lines)


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the tests run in the project's venv")
def test_given_the_venv_is_not_on_path_then_the_first_command_activates_it(tmp_path: Path) -> None:
    venv_bin = Path(sys.prefix) / "bin"

    assert activation_line("/usr/bin:/bin", cwd=tmp_path) == f"source {venv_bin / 'activate'}"
    assert (
        activation_line("/usr/bin:/bin", cwd=Path(sys.prefix).parent) == f"source {Path(sys.prefix).name}/bin/activate"
    )
    assert activation_line(f"{venv_bin}{os.pathsep}/usr/bin", cwd=tmp_path) == ""  # already active: nothing to do
