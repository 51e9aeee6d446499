"""Batching of observations and validation of the policy's actions."""

from __future__ import annotations

import numpy as np
import pytest

from eval_runner.policies.checks import check_actions
from eval_runner.rollout import stack_observations
from rlinf_bench.errors import PolicyError


def test_given_rows_then_the_batch_stacks_arrays_and_lists_language_and_episode_ids() -> None:
    rows = [
        {"robot0_eef_pos": np.ones(3, np.float32) * i, "agentview_image": np.zeros((4, 4, 3), np.uint8)}
        for i in range(3)
    ]

    batch = stack_observations(rows, ["a", "b", "c"], ["e0", "e1", "e2"])

    assert batch["robot0_eef_pos"].shape == (3, 3) and batch["robot0_eef_pos"][2, 0] == 2
    assert batch["agentview_image"].shape == (3, 4, 4, 3) and batch["agentview_image"].dtype == np.uint8
    assert batch["task_description"] == ["a", "b", "c"] and batch["episode_id"] == ["e0", "e1", "e2"]


def test_given_a_policy_without_observation_keys_then_the_batch_still_carries_language_and_ids() -> None:
    batch = stack_observations([{}, {}], ["a", "b"], ["e0", "e1"])
    assert batch == {"task_description": ["a", "b"], "episode_id": ["e0", "e1"]}


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros((2, 6)), r"shape \(2, 6\), expected \(2, 7\)"),
        (np.zeros((1, 7)), r"shape \(1, 7\), expected \(2, 7\)"),
        (np.zeros((2, 0, 7)), r"shape \(2, 0, 7\)"),
        (np.zeros((3, 8, 7)), r"shape \(3, 8, 7\), expected \(2, 7\) or an action chunk per row \(2, K, 7\)"),
        ([[0] * 7, [float("nan")] * 7], "NaN"),
        ("left", "not a numeric"),
    ],
)
def test_given_malformed_actions_then_a_policy_error_names_the_policy_and_what_is_wrong(
    actions: object, message: str
) -> None:
    with pytest.raises(PolicyError, match=f"^policy 'p' returned .*{message}"):
        check_actions(actions, 2, source="policy 'p'", chunks=True)


def test_given_action_chunks_where_single_actions_are_required_then_they_are_refused() -> None:
    with pytest.raises(PolicyError, match=r"shape \(2, 8, 7\), expected \(2, 7\)$"):
        check_actions(np.zeros((2, 8, 7)), 2, source="policy 'p'")


def test_given_well_formed_actions_or_chunks_then_they_come_back_as_arrays_of_the_asked_dtype() -> None:
    assert check_actions([[0, 0, 0, 0, 0, 0, -1]], 1, source="p", dtype=np.float64).dtype == np.float64
    assert check_actions(np.zeros((2, 8, 7)), 2, source="p", chunks=True).shape == (2, 8, 7)
