"""One evaluator: the suite picks the env kind, RoboTwin's policies sit in the one registry, and a kind's
options are refused on another kind's suite (all without the RoboTwin runtime)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eval_runner.cli import main
from eval_runner.envs.kinds import kind_for_suite
from eval_runner.envs.robotwin_policies import HoldPolicy, InstructionPolicy
from eval_runner.policies.base import Policy
from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import PolicyError


@pytest.mark.parametrize(
    ("suite", "kind"),
    [
        ("libero_goal", "libero"),
        ("robotwin", "robotwin"),
        ("robotwin_long_xl", "robotwin"),
        ("robotwin/click_bell", "robotwin"),
        ("robotwin/lift_pott", "robotwin"),  # misspelt: its kind writes the failed result
        ("libero_100", "libero"),
    ],
)
def test_given_a_suite_then_its_env_kind_comes_from_the_suite(suite: str, kind: str) -> None:
    assert kind_for_suite(suite).name == kind


def test_given_builtin_hold_then_the_one_registry_builds_it_for_robotwin_and_refuses_it_for_libero() -> None:
    policy = load_policy("builtin:hold", None, env_kind="robotwin")
    assert isinstance(policy, HoldPolicy)
    chunk = policy.act({"observation": [{"joint_action": {"vector": list(range(14))}}], "task_description": ["x"]})
    assert chunk.shape == (1, 1, 14)
    with pytest.raises(PolicyError, match="drives robotwin suites; it cannot drive a libero suite"):
        load_policy("builtin:hold", None)


def test_given_a_libero_policy_on_robotwin_then_the_error_lists_what_robotwin_accepts() -> None:
    with pytest.raises(PolicyError, match=r"cannot drive a RoboTwin suite \(14-d joint actions\).*builtin:hold"):
        load_policy("builtin:zero", None, env_kind="robotwin")


class _OldStyle:
    """The RoboTwin adapter's first policy interface: reset() and act(obs, instruction) -> [T, 14]."""

    def __init__(self) -> None:
        self.resets = 0

    def reset(self) -> None:
        self.resets += 1

    def act(self, obs: dict[str, object], instruction: str) -> np.ndarray:
        return np.full((3, 14), float(len(instruction)))


def make_old_style(checkpoint_dir: Path | None = None) -> _OldStyle:
    return _OldStyle()


def test_given_a_python_factory_of_the_old_robotwin_interface_then_it_is_wrapped_and_libero_refuses_it() -> None:
    policy = load_policy(f"python:{__name__}:make_old_style", None, env_kind="robotwin")
    assert isinstance(policy, InstructionPolicy) and isinstance(policy, Policy)
    policy.reset(["e0"])
    chunk = policy.act({"observation": [{}], "task_description": ["lift"], "episode_id": ["e0"]})
    assert chunk.shape == (1, 3, 14) and chunk[0, 0, 0] == 4.0 and policy.inner.resets == 1
    with pytest.raises(PolicyError, match=r"must return an instance of eval_runner\.policies\.base\.Policy"):
        load_policy(f"python:{__name__}:make_old_style", None)


def test_given_a_robotwin_option_on_a_libero_suite_then_exit_2_says_it_does_not_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["--suite", "libero_goal", "--planner", "mplib", "--out", str(tmp_path / "r.json"), "--no-progress"])
    assert rc == 2
    assert "--planner only apply to robotwin suites; libero_goal is a libero suite" in capsys.readouterr().err


def test_given_a_robotwin_suite_in_the_main_venv_then_exit_2_names_the_robotwin_venv_and_writes_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        import robotwin  # noqa: F401

        pytest.skip("this venv has the RoboTwin runtime")
    except ModuleNotFoundError:
        pass
    out = tmp_path / "r.json"
    rc = main(["--suite", "robotwin_short", "--policy", "builtin:hold", "--trials", "1", "--out", str(out)])
    assert rc == 2
    assert ".venv-robotwin" in capsys.readouterr().err
    assert json.loads(out.read_text())["status"] == "failed"


def test_given_the_robotwin_alias_then_help_shows_the_one_cli_with_the_robotwin_options() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "eval_runner.robotwin", "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m eval_runner.robotwin")
    assert "--assets DIR" in proc.stdout and "--protocol" in proc.stdout
