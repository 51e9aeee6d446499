"""builtin:expert without a simulator: options, refusal of unsupported goals, per-episode noise seeding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval_runner.expert_state import STATE_DIM
from eval_runner.policies.expert import LABEL, ExpertPolicy, goal_predicates
from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import PolicyError
from rlinf_bench.suites import TaskInfo

# a bowl on the table (its world bounding box) and a plate beside it, nothing else around
STATE = np.zeros(STATE_DIM, dtype=np.float32)
STATE[:12] = [-0.12, 0.15, 0.90, -0.01, 0.26, 0.95, -0.02, 0.14, 0.90, 0.12, 0.27, 0.92]


def _task(tmp_path: Path, goal: str, name: str = "some_task") -> TaskInfo:
    bddl = tmp_path / f"{name}.bddl"
    bddl.write_text(f"(define (problem P)\n  (:objects bowl_1 - bowl)\n  (:goal\n    {goal}\n  )\n\n)\n")
    return TaskInfo(
        suite="libero_goal", task_id=3, name=name, language="x", bddl_file=bddl, init_states_file=tmp_path / "i"
    )


def _obs(episode_ids: list[str]) -> dict[str, object]:
    n = len(episode_ids)
    return {
        "robot0_eef_pos": np.tile(np.array([-0.2, 0.0, 1.17], np.float32), (n, 1)),
        "robot0_eef_quat": np.tile(np.array([0.7, 0.7, 0.0, 0.0], np.float32), (n, 1)),  # pointing down
        "robot0_gripper_qpos": np.zeros((n, 2), np.float32),
        "privileged_state": np.tile(STATE, (n, 1)),
        "task_description": ["x"] * n,
        "episode_id": episode_ids,
    }


def test_given_options_then_they_are_parsed_and_described_as_a_scripted_expert() -> None:
    policy = load_policy("builtin:expert?noise=0.5&hesitate=0.1&seed=7", None)
    assert isinstance(policy, ExpertPolicy)
    assert (policy.noise, policy.hesitate, policy.seed) == (0.5, 0.1, 7)
    described = policy.describe()
    assert described["kind"] == LABEL and "not a learned policy" in described["kind"]
    assert policy.obs_spec.privileged and not policy.obs_spec.cameras


@pytest.mark.parametrize(
    ("spec", "named"),
    [("builtin:expert?noise=-1", "noise=-1"), ("builtin:expert?hesitate=1", "hesitate=1"), ("builtin:expert?x=1", "x")],
)
def test_given_bad_option_then_the_error_names_it(spec: str, named: str) -> None:
    with pytest.raises(PolicyError, match=named):
        load_policy(spec, None)


def test_given_on_goal_then_accepted(tmp_path: Path) -> None:
    task = _task(tmp_path, "(And (On akita_black_bowl_1 plate_1))")
    assert goal_predicates(task) == [("on", "akita_black_bowl_1", "plate_1")]
    ExpertPolicy().check_tasks([task, _task(tmp_path, "(And (In soup_1 basket_1_contain_region))", "b")])


@pytest.mark.parametrize(
    ("goal", "named"),
    [
        ("(And (Open wooden_cabinet_1_top_region))", r"\(open wooden_cabinet_1_top_region\)"),
        ("(And (TurnOn flat_stove_1))", r"\(turnon flat_stove_1\)"),
        ("(And (In a_1 b_region) (In c_1 b_region))", r"\(in a_1 b_region\), \(in c_1 b_region\)"),
    ],
)
def test_given_unsupported_goal_then_refused_naming_the_predicate_and_task(
    tmp_path: Path, goal: str, named: str
) -> None:
    with pytest.raises(PolicyError, match=named) as info:
        ExpertPolicy().check_tasks([_task(tmp_path, goal)])
    assert "libero_goal/3" in str(info.value)


def test_given_no_privileged_state_then_error_says_where_it_runs() -> None:
    obs = _obs(["t0-s0-a0"])
    del obs["privileged_state"]
    with pytest.raises(PolicyError, match="privileged_state"):
        ExpertPolicy().act(obs)


def test_given_noise_then_an_episode_repeats_whatever_its_batch_and_attempt() -> None:
    alone = ExpertPolicy(noise=0.5, hesitate=0.2, seed=3)
    batched = ExpertPolicy(noise=0.5, hesitate=0.2, seed=3)
    solo = [alone.act(_obs(["t1-s2-a0"]))[0] for _ in range(20)]
    mixed = [batched.act(_obs(["t0-s0-a0", "t1-s2-a1"]))[1] for _ in range(20)]  # a retry, in a batch
    assert np.array_equal(np.stack(solo), np.stack(mixed))
    other = ExpertPolicy(noise=0.5, hesitate=0.2, seed=4)
    assert not np.array_equal(np.stack(solo), np.stack([other.act(_obs(["t1-s2-a0"]))[0] for _ in range(20)]))


def test_given_no_noise_then_the_first_move_heads_for_the_object_with_the_gripper_open() -> None:
    action = ExpertPolicy().act(_obs(["t0-s0-a0"]))[0]
    assert action.shape == (7,) and action[-1] == -1.0
    assert action[0] > 0 and action[1] > 0  # towards the bowl at (-0.065, 0.205)
