"""Validation of what a policy returns, shared by the loop, the server and the client."""

from __future__ import annotations

from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM
from rlinf_bench.errors import PolicyError


def check_actions(
    actions: Any,
    rows: int,
    *,
    source: str,
    chunks: bool = False,
    dtype: type[np.floating[Any]] = np.float32,
    action_dim: int = ACTION_DIM,
) -> np.ndarray:
    """``actions`` as a ``[rows, action_dim]`` array of ``dtype`` (LIBERO's 7 by default), or a PolicyError
    naming ``source`` and what is wrong.

    With ``chunks``, a ``[rows, K, action_dim]`` array (an action chunk per row, K >= 1) is accepted too.
    Non-finite values are refused because MuJoCo would silently propagate NaN into the scene.
    """
    try:
        array = np.asarray(actions, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"{source} returned actions that are not a numeric array: {exc}") from exc
    chunked = chunks and array.ndim == 3 and array.shape[0] == rows and array.shape[1] >= 1
    if array.shape[-1:] != (action_dim,) or not (array.shape == (rows, action_dim) or chunked):
        expected = f"({rows}, {action_dim})" + (
            f" or an action chunk per row ({rows}, K, {action_dim})" if chunks else ""
        )
        raise PolicyError(f"{source} returned actions of shape {array.shape}, expected {expected}")
    if not np.isfinite(array).all():
        raise PolicyError(f"{source} returned NaN or infinite actions")
    return array


def runner_executes_chunks(chunks: str, spec: str) -> bool:
    """The ``chunks=`` option of a chunking policy: ``runner`` (True) returns each row's whole chunk for the
    worker to execute, ``policy`` (False) keeps the chunks in the policy and returns one action per call."""
    if chunks not in ("runner", "policy"):
        raise PolicyError(f"policy spec {spec!r}: chunks={chunks!r}; use chunks=runner or chunks=policy")
    return chunks == "runner"


def chunk_executor(runner_chunks: bool) -> str:
    """Who executes a chunk, as recorded in a policy's description."""
    return "runner" if runner_chunks else "policy"


def batch_size(obs: dict[str, Any]) -> int:
    """Number of rows in an observation batch, from its ``episode_id`` list."""
    ids = obs.get("episode_id")
    if not isinstance(ids, list | tuple):
        raise PolicyError("observation batch has no 'episode_id' list; every batch must carry one id per row")
    return len(ids)
