"""The RoboTwin entry point up to the asset boundary: task listing, request checks, policy specs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("robotwin", reason="needs the RoboTwin runtime: runs in .venv-robotwin (make test-robotwin)")

from eval_runner.robotwin.cli import main
from eval_runner.robotwin.policy import HoldPolicy, load_policy
from eval_runner.robotwin.runner import selected_tasks
from rlinf_bench.contracts import CheckpointRef, EvalRun
from rlinf_bench.errors import ConfigError, PolicyError


def _run(**kw: object) -> EvalRun:
    data = {"request_id": "r", "checkpoint": CheckpointRef(uri="", experiment="e", global_step=0), "run_index": 0}
    data.update(suite="robotwin", seed=0, **kw)
    return EvalRun.model_validate(data)


def test_given_list_tasks_then_ids_limits_groups_and_descriptions_are_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--suite", "robotwin_medium", "--list-tasks"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("robotwin_medium: 4 tasks")
    assert "  3  handover_mic  (limit 600, horizon medium)" in out


def test_given_task_ids_then_they_select_from_the_suite() -> None:
    assert [t.name for t in selected_tasks(_run(task_ids=[3, 0]))] == ["lift_pot", "place_phone_stand"]
    with pytest.raises(ConfigError, match="out of range for suite robotwin"):
        selected_tasks(_run(task_ids=[12]))


def test_given_a_max_steps_override_then_it_is_refused_with_the_reason() -> None:
    with pytest.raises(ConfigError, match="stop at their own step limit"):
        selected_tasks(_run(max_steps=100))


def test_given_a_libero_policy_then_the_error_lists_what_robotwin_accepts() -> None:
    with pytest.raises(PolicyError, match=r"cannot drive a RoboTwin suite .*builtin:hold"):
        load_policy("builtin:demo")


def test_given_the_hold_policy_then_it_returns_the_observed_joints_as_one_step() -> None:
    policy = load_policy("builtin:hold")
    assert isinstance(policy, HoldPolicy)
    chunk = policy.act({"joint_action": {"vector": list(range(14))}}, "lift the pot")
    assert chunk.shape == (1, 14) and np.array_equal(chunk[0], np.arange(14))


def test_given_an_unknown_suite_then_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--suite", "robotwin_shrt", "--out", str(tmp_path / "x.json")]) == 2
    assert "Did you mean 'robotwin_short'" in capsys.readouterr().err
