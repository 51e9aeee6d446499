"""stdout carries results only, on every command: the embedded default's progress lines go to stderr, and the
INFO lines of libraries (MLflow creating its tables, alembic, OpenGL) are silenced unless -v."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rlinf_local.embedded import Embedded

REPO = Path(__file__).resolve().parents[3]


def test_given_the_embedded_default_then_its_progress_lines_go_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Embedded(tmp_path).echo("execution demo-s100 started: Jobs run under DIR/jobs")

    out, err = capsys.readouterr()
    assert out == "" and "started" in err


def test_given_a_new_mlflow_store_then_no_library_info_line_is_printed(tmp_path: Path) -> None:
    cli = [str(Path(sys.executable).with_name("rlinf-bench")), "report", "--out", str(tmp_path / "r")]
    cli += ["--tracking-uri", f"sqlite:///{tmp_path / 'new.db'}"]

    proc = subprocess.run(cli, capture_output=True, text=True, cwd=REPO, timeout=300, check=False)

    assert proc.returncode == 2 and proc.stdout == ""  # nothing published there: one error line, on stderr
    assert proc.stderr.startswith("rlinf-bench report: error: experiment 'RLinf' not found"), proc.stderr[-2000:]
    assert "INFO" not in proc.stderr  # MLflow creating its tables, alembic
