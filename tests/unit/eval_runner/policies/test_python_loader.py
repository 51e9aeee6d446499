"""python:module:factory loads in-process policies, with clear errors when it cannot."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import CheckpointError, PolicyError

MODULE = """
import numpy as np
from eval_runner.policies.base import ObservationSpec, Policy
from rlinf_bench.errors import CheckpointError

class Constant(Policy):
    obs_spec = ObservationSpec(cameras=("agentview",), resolution=96)

    def __init__(self, checkpoint_dir, value):
        self.checkpoint_dir = checkpoint_dir
        self.value = value

    def act(self, obs):
        return np.full((len(obs["episode_id"]), 7), self.value, dtype=np.float32)

def make(checkpoint_dir=None, value=0.0):
    return Constant(checkpoint_dir, value)

def needs_checkpoint(checkpoint_dir=None):
    raise CheckpointError("no weights at " + str(checkpoint_dir))

def broken(checkpoint_dir=None):
    raise ValueError("model config missing")

def not_a_policy(checkpoint_dir=None):
    return object()

NOT_CALLABLE = 3
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "user_policies_mod.py").write_text(textwrap.dedent(MODULE))
    (tmp_path / "needs_missing_dep.py").write_text("import definitely_not_installed_pkg\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "user_policies_mod"


def test_given_factory_then_it_gets_checkpoint_and_typed_options(user_module: str, tmp_path: Path) -> None:
    policy = load_policy(f"python:{user_module}:make?value=0.25", tmp_path)
    assert policy.checkpoint_dir == tmp_path  # type: ignore[attr-defined]
    actions = policy.act({"episode_id": ["a", "b"]})
    assert actions.shape == (2, 7) and np.all(actions == 0.25)
    assert policy.obs_spec.cameras == ("agentview",) and policy.obs_spec.resolution == 96


def test_given_missing_module_then_error_says_install_or_pythonpath() -> None:
    with pytest.raises(PolicyError, match="module 'no_such_policy_mod' not found; install its package or add"):
        load_policy("python:no_such_policy_mod:make", None)


def test_given_module_with_missing_dependency_then_error_names_the_dependency(user_module: str) -> None:
    with pytest.raises(PolicyError, match="needs 'definitely_not_installed_pkg'"):
        load_policy("python:needs_missing_dep:make", None)


def test_given_missing_attribute_then_error_lists_what_module_defines(user_module: str) -> None:
    with pytest.raises(PolicyError, match=r"has no attribute 'mak' .*make"):
        load_policy(f"python:{user_module}:mak", None)


def test_given_non_callable_then_error(user_module: str) -> None:
    with pytest.raises(PolicyError, match="NOT_CALLABLE is a int, not callable"):
        load_policy(f"python:{user_module}:NOT_CALLABLE", None)


def test_given_factory_returning_non_policy_then_error_explains_contract(user_module: str) -> None:
    with pytest.raises(PolicyError, match="returned a object; it must return an instance of"):
        load_policy(f"python:{user_module}:not_a_policy", None)


def test_given_factory_raising_then_policy_error_keeps_the_cause(user_module: str) -> None:
    with pytest.raises(PolicyError, match="raised ValueError: model config missing") as exc:
        load_policy(f"python:{user_module}:broken", None)
    assert isinstance(exc.value.__cause__, ValueError)


def test_given_factory_raising_project_error_then_it_passes_unchanged(user_module: str, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=f"no weights at {tmp_path}"):
        load_policy(f"python:{user_module}:needs_checkpoint", tmp_path)


def test_given_spec_without_factory_then_error_shows_the_form() -> None:
    with pytest.raises(PolicyError, match="expected python:MODULE:FACTORY"):
        load_policy("python:just_a_module", None)
