"""``evaluate --json``: the RunResult on stdout, nothing else there; the table and logs on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_runner.job import EvalJob
from rlinf_bench.contracts import Provenance, RunResult, RunStatus
from rlinf_cli.main import main


def fake_run_job(job: EvalJob, provenance: Provenance) -> RunResult:
    """A complete run of no episodes, written where the real one writes it; prints as a library might."""
    print("a library printing on stdout")
    result = RunResult.of_run(job.run, RunStatus.COMPLETE, max_steps=job.run.max_steps or 1, settle_steps=0)
    Path(job.out).write_text(result.to_json())
    return result


@pytest.fixture(autouse=True)
def fake_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run replaced after the edge (parsing, the kind's options and its edge check stay the real ones)."""
    monkeypatch.setattr("eval_runner.cli.run_job", fake_run_job)


def test_given_json_then_stdout_is_the_run_result_and_the_table_goes_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"

    rc = main(["evaluate", "--tasks", "0", "--trials", "2", "--out", str(out), "--no-progress", "--json"])

    captured = capsys.readouterr()
    assert rc == 0
    doc = json.loads(captured.out)
    assert (doc["status"], doc["suite"], doc["trials_per_task"]) == ("complete", "libero_spatial", 2)
    assert "a library printing on stdout" in captured.err and f"result: {out}" in captured.err


def test_given_no_json_then_the_table_is_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["evaluate", "--tasks", "0", "--out", str(tmp_path / "r.json"), "--no-progress"])

    assert rc == 0 and capsys.readouterr().out.splitlines()[-1] == f"result: {tmp_path / 'r.json'}"


def test_given_json_with_list_tasks_then_exit_2_rather_than_ignoring_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--list-tasks", "--json"]) == 2
    assert "--list-tasks prints a table, not JSON: drop --json" in capsys.readouterr().err


def test_given_ctrl_c_during_the_run_then_exit_130_saying_how_to_finish_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(job: EvalJob, provenance: Provenance) -> RunResult:
        raise KeyboardInterrupt

    monkeypatch.setattr("eval_runner.cli.run_job", interrupted)
    out = tmp_path / "r.json"

    assert main(["evaluate", "--tasks", "0", "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"rlinf-bench evaluate: interrupted; the finished episodes are in {out}: run the same command with --resume to finish it"
    )
