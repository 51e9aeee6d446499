"""Validation of what a policy returns, shared by the loop, the server and the client."""

from __future__ import annotations

from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM
from rlinf_bench.errors import PolicyError


def check_actions(actions: Any, rows: int, *, source: str) -> np.ndarray:
    """``actions`` as a float32 ``[rows, 7]`` array, or a PolicyError naming ``source`` and what is wrong.

    Non-finite values are refused because MuJoCo would silently propagate NaN into the scene.
    """
    try:
        array = np.asarray(actions, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"{source} returned actions that are not a numeric array: {exc}") from exc
    if array.shape != (rows, ACTION_DIM):
        raise PolicyError(f"{source} returned actions of shape {array.shape}, expected ({rows}, {ACTION_DIM})")
    if not np.isfinite(array).all():
        raise PolicyError(f"{source} returned NaN or infinite actions")
    return array


def batch_size(obs: dict[str, Any]) -> int:
    """Number of rows in an observation batch, from its ``episode_id`` list."""
    ids = obs.get("episode_id")
    if not isinstance(ids, list | tuple):
        raise PolicyError("observation batch has no 'episode_id' list; every batch must carry one id per row")
    return len(ids)
