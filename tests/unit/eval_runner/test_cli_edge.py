"""The evaluate command's edge: its input is read once, its provenance collected once, and the run checked once,
against what Plan cannot know (the initial states this machine's LIBERO has)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import eval_runner.cli
import rlinf_bench.provenance
from rlinf_bench.contracts import CheckpointRef, EvalRun, Provenance
from rlinf_cli.main import main


class _Report:
    def record(self) -> dict[str, Any]:
        return {"checks": "stubbed"}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the request is read and the provenance collected (every place that may do either)."""
    calls = {"load_request": 0, "collect_provenance": 0}
    load, collect = eval_runner.cli.load_request, rlinf_bench.provenance.collect_provenance

    def counted_load(*args: Any, **kwargs: Any) -> EvalRun:
        calls["load_request"] += 1
        return load(*args, **kwargs)

    def counted_collect(*args: Any, **kwargs: Any) -> Provenance:
        calls["collect_provenance"] += 1
        return collect(*args, **kwargs)

    monkeypatch.setattr("eval_runner.cli.load_request", counted_load)
    for where in ("eval_runner.cli", "eval_runner.cli_checks", "eval_runner.loop", "rlinf_bench.provenance"):
        monkeypatch.setattr(f"{where}.collect_provenance", counted_collect, raising=False)
    monkeypatch.setattr("rlinf_doctor.preflight.eval_preflight", lambda run, **kw: _Report())
    return calls


def test_given_a_request_file_when_the_run_fails_in_the_loop_then_it_was_read_once_and_provenance_collected_once(
    counted: dict[str, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "exp" / "checkpoints" / "global_step_9"
    request = tmp_path / "run.json"
    request.write_text(
        EvalRun(
            request_id="req",
            checkpoint=CheckpointRef(uri=str(missing), experiment="exp", global_step=9),
            suite="libero_goal",
            run_index=0,
            seed=0,
            task_ids=[0],
            trials_per_task=1,
            policy="builtin:zero",
            output_uri=str(tmp_path / "r.json"),
        ).to_json()
    )

    rc = main(["evaluate", "--request", str(request), "--no-progress"])

    result = json.loads((tmp_path / "r.json").read_text())
    assert rc == 2 and str(missing) in capsys.readouterr().err
    assert result["status"] == "failed" and result["provenance"]["extra"]["doctor"] == {"checks": "stubbed"}
    assert counted == {"load_request": 1, "collect_provenance": 1}


def test_given_a_refused_run_then_its_failed_result_has_the_one_provenance(
    counted: dict[str, int], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"

    assert main(["evaluate", "--tasks", "12", "--policy", "builtin:zero", "--out", str(out)]) == 2

    assert json.loads(out.read_text())["provenance"]["command"]
    assert counted["collect_provenance"] == 1


def test_given_a_libero_install_with_fewer_initial_states_then_the_trials_are_checked_against_its_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[str] = []
    monkeypatch.setattr("eval_runner.init_states.load_init_states", lambda path: np.zeros((3, 9)))
    monkeypatch.setattr("rlinf_doctor.preflight.eval_preflight", lambda run, **kw: ran.append("preflight"))
    out = tmp_path / "r.json"

    rc = main(["evaluate", "--suite", "libero_goal", "--tasks", "0", "--trials", "4", "--out", str(out)])

    err = capsys.readouterr().err
    assert rc == 2 and ran == []  # refused before the doctor's checks
    assert "task 0 of libero_goal" in err and "has 3 initial states in" in err and ".pruned_init" in err
    assert "at most 3" in err
    assert json.loads(out.read_text())["status"] == "failed"
