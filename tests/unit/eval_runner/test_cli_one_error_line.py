"""One line per error: a failed run prints its error once (with the result file), and no log line repeats it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from rlinf_cli.main import main


class _Report:
    def record(self) -> dict[str, Any]:
        return {}


def test_given_a_run_that_fails_in_the_loop_then_its_error_is_printed_once_with_the_result_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("rlinf_doctor.preflight.eval_preflight", lambda run, **kw: _Report())
    missing = tmp_path / "exp" / "checkpoints" / "global_step_9"
    out = tmp_path / "r.json"

    with caplog.at_level(logging.INFO):
        # A short run: a long one says first how long it would take (eval_runner.run_estimate), not an error.
        short = ["--tasks", "0", "--trials", "2"]
        rc = main(["evaluate", str(missing), *short, "--policy", "builtin:demo", "--out", str(out), "--no-progress"])

    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("rlinf-bench evaluate: error: ")
    assert str(missing) in err[0] and err[0].endswith(f"; result: {out}")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or str(missing) in r.getMessage()]
