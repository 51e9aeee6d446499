"""The GPU benchmark's 7B-class policy, shrunk to run on a CPU: its chunks, either way they are served.

The policy runs in a child process (``stand_in_checks.py``, through the ``stand_in_checks`` fixture), as it
does behind ``rlinf-bench serve-policy``: transformers pulls in triton, whose bundled LLVM crashes a process
that already loaded Mesa's (the simulator tests do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("transformers", reason="pip install 'rlinf-bench[gpu-bench]'")


def test_given_runner_chunks_then_each_row_gets_its_8_actions_and_the_policy_mode_hands_out_the_same_ones(
    stand_in_checks: Callable[[str], dict[str, Any]],
) -> None:
    got = stand_in_checks("runner_chunks")

    assert got["shape"] == [3, 8, 7] and got["executed_by"] == "runner"
    # one forward each: the runner's chunk, and the chunk the per-call mode then hands out over 8 calls
    assert got["forwards"] == [1, 1]
    assert got["max_diff"] <= 1e-6
    assert set(got["grippers"]) <= {-1.0, 1.0} and got["max_arm"] <= 0.1
    assert "chunks='server'" in got["refused"]
