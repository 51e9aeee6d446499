"""The one CLI on RoboTwin suites up to the asset boundary: task listing, request checks, policy specs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("robotwin", reason="needs the RoboTwin runtime: runs in .venv-robotwin (make test-robotwin)")

from eval_runner.cli import main
from eval_runner.envs.robotwin_kind import selected_tasks
from eval_runner.envs.robotwin_policies import HoldPolicy
from eval_runner.policies.factory import load_policy
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
    assert out.rstrip().splitlines()[-1].startswith("observation: {'observation': the runtime's get_obs() dict")
    assert "action: 14 values, qpos targets" in out


def test_given_task_ids_then_they_select_from_the_suite() -> None:
    assert [t.name for t in selected_tasks(_run(task_ids=[3, 0]))] == ["lift_pot", "place_phone_stand"]
    with pytest.raises(ConfigError, match="out of range for suite robotwin"):
        selected_tasks(_run(task_ids=[12]))


def test_given_a_max_steps_override_then_it_is_refused_with_the_reason() -> None:
    with pytest.raises(ConfigError, match="stop at their own step limit"):
        selected_tasks(_run(max_steps=100))


def test_given_a_libero_policy_then_the_error_lists_what_robotwin_accepts() -> None:
    with pytest.raises(PolicyError, match=r"cannot drive a RoboTwin suite .*builtin:hold"):
        load_policy("builtin:zero", None, env_kind="robotwin")


def test_given_the_hold_policy_then_it_returns_the_observed_joints_as_one_step() -> None:
    policy = load_policy("builtin:hold", None, env_kind="robotwin")
    assert isinstance(policy, HoldPolicy)
    chunk = policy.act({"observation": [{"joint_action": {"vector": list(range(14))}}], "task_description": ["x"]})
    assert chunk.shape == (1, 1, 14) and np.array_equal(chunk[0, 0], np.arange(14))


def test_given_an_unknown_suite_then_exit_2_and_a_failed_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.json"
    assert main(["--suite", "robotwin_shrt", "--out", str(out)]) == 2
    assert "Did you mean 'robotwin_short'" in capsys.readouterr().err
    result = json.loads(out.read_text())
    assert result["status"] == "failed" and "Did you mean 'robotwin_short'" in result["error"]


def test_given_the_alias_without_a_suite_then_it_lists_the_briefs_twelve_tasks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "eval_runner.robotwin", "--list-tasks"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("robotwin: 12 tasks")
