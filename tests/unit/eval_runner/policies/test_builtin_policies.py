"""builtin:zero and builtin:random: shapes, determinism, seeding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eval_runner.policies.base import SETTLE_ACTION
from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import PolicyError


def test_given_zero_policy_then_every_row_is_the_settle_action(obs_factory: Any) -> None:
    policy = load_policy("builtin:zero", None)
    actions = policy.act(obs_factory(5))
    assert actions.shape == (5, 7) and actions.dtype == np.float32
    assert (actions == np.asarray(SETTLE_ACTION, dtype=np.float32)).all()


def test_given_zero_or_random_then_they_ask_for_no_observations() -> None:
    for spec in ("builtin:zero", "builtin:random"):
        obs_spec = load_policy(spec, None).obs_spec
        assert obs_spec.cameras == () and obs_spec.proprio == () and not obs_spec.needs_renderer


def test_given_same_seed_then_random_actions_repeat_and_other_seed_differs(obs_factory: Any) -> None:
    obs = obs_factory(4)
    runs = [[load_policy(f"builtin:random?seed={s}", None).act(obs) for _ in range(1)] for s in (3, 3, 4)]
    first, again, other = (r[0] for r in runs)
    assert np.array_equal(first, again)
    assert not np.allclose(first, other)


def test_given_random_policy_then_arm_in_range_and_gripper_binary(obs_factory: Any) -> None:
    policy = load_policy("builtin:random?seed=1&scale=0.25", None)
    actions = np.concatenate([policy.act(obs_factory(8)) for _ in range(20)])
    assert actions.shape == (160, 7) and actions.dtype == np.float32
    assert np.abs(actions[:, :6]).max() <= 0.25
    assert set(np.unique(actions[:, 6])) == {-1.0, 1.0}


def test_given_episode_batched_differently_then_its_random_actions_do_not_change(obs_factory: Any) -> None:
    # Worker count changes batch composition; an episode's actions must not depend on it.
    alone = load_policy("builtin:random?seed=7", None)
    batched = load_policy("builtin:random?seed=7", None)
    big = obs_factory(3)
    single = {**obs_factory(1), "episode_id": [big["episode_id"][2]]}
    for _ in range(3):
        assert np.array_equal(alone.act(single)[0], batched.act(big)[2])


def test_given_reset_then_random_episode_restarts_its_sequence(obs_factory: Any) -> None:
    policy = load_policy("builtin:random?seed=2", None)
    obs = obs_factory(2)
    first = policy.act(obs)
    second = policy.act(obs)
    policy.reset(obs["episode_id"])
    assert np.array_equal(policy.act(obs), first)
    assert not np.array_equal(first, second)


def test_given_scale_out_of_range_then_error() -> None:
    with pytest.raises(PolicyError, match=r"scale=2.0 must be in \(0, 1\]"):
        load_policy("builtin:random?scale=2", None)


def test_given_batch_without_episode_ids_then_error_says_what_is_missing() -> None:
    with pytest.raises(PolicyError, match="episode_id"):
        load_policy("builtin:zero", None).act({"task_description": ["x"]})


def test_given_builtin_policies_then_describe_names_the_spec() -> None:
    assert load_policy("builtin:random?seed=5", None).describe() == {
        "class": "RandomPolicy",
        "spec": "builtin:random?seed=5",
        "seed": 5,
        "scale": 1.0,
    }
