"""``evaluate`` says before it starts when a run will take long, how long, and how to make a short one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eval_runner.run_estimate import LONG_RUN_S, estimate_run, long_run_notice
from rlinf_bench.contracts import CheckpointRef, EvalRun
from rlinf_cli.main import main


class PreflightReached(Exception):
    """The stand-in preflight: the run would start here."""


@pytest.fixture
def preflight(monkeypatch: pytest.MonkeyPatch) -> None:
    def reached(run: EvalRun, **kw: Any) -> None:
        raise PreflightReached

    monkeypatch.setattr("rlinf_doctor.preflight.eval_preflight", reached)


def a_run(**fields: Any) -> EvalRun:
    ref = CheckpointRef(uri="", experiment="none", global_step=0)
    return EvalRun.from_dict(
        {"request_id": "local", "checkpoint": ref.model_dump(), "suite": "libero_spatial", "seed": 0, "run_index": 0}
        | fields,
        source="the test",
    )


def test_given_evaluate_with_its_defaults_then_stderr_says_how_long_and_how_to_run_short_before_it_starts(
    preflight: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN the first example of --help runs with every default (10 tasks x 50 trials, 512 + 15 steps, 1 worker)
    with pytest.raises(PreflightReached):
        main(["evaluate", "--suite", "libero_spatial", "--out", str(tmp_path / "r.json"), "--no-progress"])

    # THEN before the run starts, stderr gives its size, the estimate, a short run and the default policy's worth
    out, err = capsys.readouterr()
    assert "evaluate: a long run: 500 episodes (10 tasks x 50 trials) of up to 527 steps" in err
    assert "about 50 min with 1 worker(s)" in err
    assert "a short run first: --tasks 0 --trials 2 --max-steps 50" in err
    assert "builtin:demo is a smoke test that scores about 0 %" in err
    assert "a long run" not in out


def test_given_a_short_run_then_nothing_is_said_about_time(
    preflight: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PreflightReached):
        main(["evaluate", "--tasks", "0", "--trials", "2", "--max-steps", "50", "--out", str(tmp_path / "r.json")])

    assert "a long run" not in capsys.readouterr().err


def test_given_a_camera_policy_then_the_slower_rendering_rate_is_used() -> None:
    physics = estimate_run(a_run(task_ids=[0], trials_per_task=10), cores=2)
    camera = estimate_run(a_run(task_ids=[0], trials_per_task=10, policy="builtin:demo?cameras=agentview"), cores=2)

    assert physics is not None and camera is not None
    assert camera.camera and not physics.camera
    assert camera.seconds > 5 * physics.seconds


def test_given_more_workers_than_cores_then_the_estimate_counts_one_per_core() -> None:
    est = estimate_run(a_run(workers=8), cores=2)

    assert est is not None and est.workers == 2


def test_given_a_run_just_under_the_limit_then_no_notice_and_over_it_then_one() -> None:
    est = estimate_run(a_run(task_ids=[0]), cores=1)
    assert est is not None and est.seconds < LONG_RUN_S  # 1 task x 50 trials x 527 steps at 88 steps/s
    assert long_run_notice(a_run(task_ids=[0]), cores=1) is None
    assert long_run_notice(a_run(task_ids=[0, 1, 2]), cores=1) is not None


def test_given_a_robotwin_suite_then_no_estimate_is_made() -> None:
    assert estimate_run(a_run(suite="robotwin")) is None
