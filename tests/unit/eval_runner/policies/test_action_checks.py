"""check_actions: the one place that decides whether a policy's output can reach the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from eval_runner.policies.checks import batch_size, check_actions
from rlinf_bench.errors import PolicyError


def test_given_list_of_rows_then_float32_array_comes_back() -> None:
    actions = check_actions([[0, 0, 0, 0, 0, 0, -1]] * 2, 2, source="policy p")
    assert actions.dtype == np.float32 and actions.shape == (2, 7)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros((2, 6)), r"policy p returned actions of shape \(2, 6\), expected \(3, 7\)"),
        (np.zeros((3, 7, 1)), r"shape \(3, 7, 1\)"),
        (np.full((3, 7), np.nan), "NaN or infinite"),
        ([["a"] * 7] * 3, "not a numeric array"),
    ],
)
def test_given_malformed_actions_then_policy_error_names_source(actions: object, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        check_actions(actions, 3, source="policy p")


def test_given_batch_then_size_comes_from_episode_ids() -> None:
    assert batch_size({"episode_id": ["a", "b"]}) == 2
    with pytest.raises(PolicyError, match="no 'episode_id' list"):
        batch_size({"episode_id": "a"})
