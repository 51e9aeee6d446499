"""Same seed and a deterministic policy give identical episodes, whatever the number of workers.

The policy is called one row at a time inside the wrapper: batched float32 matmuls round differently
for different batch compositions (~1e-7, measured with the demo policy), and which episodes share a
batch depends on timing. Row-by-row evaluation isolates what the runner controls: seeding, reset,
initial state, settling and stepping.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.loop import evaluate
from eval_runner.policies.factory import load_policy
from tests.sim.helpers import ProprioRecording, episode_rows, make_run, settings

pytestmark = pytest.mark.sim


def test_given_the_same_seed_when_run_with_one_or_two_workers_then_episodes_and_trajectories_are_identical(
    tmp_path: Path, libero_cache: Path
) -> None:
    ref = write_demo_checkpoint(tmp_path / "ckpt")
    run = make_run(checkpoint=ref, policy="builtin:demo", trials_per_task=2, max_steps=12)
    a = ProprioRecording(load_policy("builtin:demo", Path(ref.uri)))
    b = ProprioRecording(load_policy("builtin:demo", Path(ref.uri)))

    result_a = evaluate(
        run.model_copy(update={"workers": 2}), out_path=tmp_path / "a.json", policy=a, settings=settings(libero_cache)
    )
    result_b = evaluate(run, out_path=tmp_path / "b.json", policy=b, settings=settings(libero_cache))

    assert episode_rows(result_a) == episode_rows(result_b)
    assert set(a.seen) == set(b.seen) == {"t0-s0-a0", "t0-s1-a0"}
    for episode_id in a.seen:
        assert np.array_equal(np.stack(a.seen[episode_id]), np.stack(b.seen[episode_id])), episode_id
    # Non-trivial: the demo policy really moves the arm, and two initial states give different trajectories.
    first = np.stack(a.seen["t0-s0-a0"])
    assert not np.allclose(first[0], first[-1])
    assert not np.array_equal(first, np.stack(a.seen["t0-s1-a0"]))
