"""What ``evaluate`` refuses before its preflight (seconds of doctor checks): bad arguments, and a run that
would discard the finished episodes already at ``--out`` (without ``--resume`` or ``--overwrite``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.contracts import EvalRun, RunResult, RunStatus
from rlinf_cli.main import main
from tests.unit.stats.runfactory import make_run


@pytest.fixture(autouse=True)
def preflight(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The LIBERO kind's preflight and loop, replaced by a recorder (they take seconds and a simulator)."""
    ran: list[str] = []

    def fake_preflight(run: EvalRun, **kw: Any) -> None:
        ran.append("preflight")
        raise AssertionError("stop after the preflight")

    monkeypatch.setattr("rlinf_doctor.preflight.eval_preflight", fake_preflight)
    return ran


def _finished(path: Path, episodes: int = 2) -> str:
    """A result file of an interrupted libero_spatial run with ``episodes`` finished episodes."""
    result = make_run({0: [1] * episodes}, status=RunStatus.INCOMPLETE, ckpt=None, policy="builtin:zero")
    path.write_text(result.to_json())
    return path.read_text()


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--tasks", "12"], "valid ids are 0..9"),
        (["--trials", "51"], "at most 50"),
        (["--suite", "libero_gaol"], "Did you mean 'libero_goal'"),
    ],
)
def test_given_bad_arguments_then_exit_2_before_the_preflight_with_a_failed_result(
    flags: list[str], named: str, preflight: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"

    rc = main(["evaluate", *flags, "--policy", "builtin:zero", "--out", str(out), "--no-progress"])

    assert rc == 2 and preflight == []
    assert named in capsys.readouterr().err
    assert json.loads(out.read_text())["status"] == "failed"


def test_given_finished_episodes_at_out_then_exit_2_naming_the_file_and_both_flags_and_the_file_is_kept(
    preflight: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    before = _finished(out)

    rc = main(["evaluate", "--tasks", "0", "--trials", "2", "--policy", "builtin:zero", "--out", str(out)])

    err = capsys.readouterr().err
    assert rc == 2 and preflight == [] and out.read_text() == before
    assert f"--out {out} already holds 2 finished episode(s)" in err and "--resume" in err and "--overwrite" in err


def test_given_finished_episodes_and_bad_arguments_then_the_file_is_not_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    before = _finished(out)

    assert main(["evaluate", "--tasks", "12", "--policy", "builtin:zero", "--out", str(out)]) == 2
    assert out.read_text() == before


@pytest.mark.parametrize("flag", ["--resume", "--overwrite"])
def test_given_resume_or_overwrite_then_the_run_goes_on_to_the_preflight(
    flag: str, preflight: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    _finished(out)

    with pytest.raises(AssertionError, match="stop after the preflight"):
        main(["evaluate", "--tasks", "0", "--trials", "2", "--policy", "builtin:zero", "--out", str(out), flag])
    assert preflight == ["preflight"]


def test_given_a_failed_result_without_episodes_then_a_rerun_needs_no_flag(
    preflight: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    assert main(["evaluate", "--tasks", "12", "--policy", "builtin:zero", "--out", str(out)]) == 2
    assert RunResult.load(out).episodes == 0

    with pytest.raises(AssertionError, match="stop after the preflight"):
        main(["evaluate", "--tasks", "0", "--policy", "builtin:zero", "--out", str(out)])


def test_given_resume_and_overwrite_together_then_argparse_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--resume", "--overwrite"])
    assert "not allowed with argument" in capsys.readouterr().err
