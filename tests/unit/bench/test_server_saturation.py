"""bench/server_saturation.py: a GPU-like policy served with requests always queued."""

from __future__ import annotations

import os

import pytest

from bench.server_saturation import GpuLike, observation, saturate


def test_the_gpu_like_policy_answers_a_chunk_per_row_after_its_time_per_row() -> None:
    actions = GpuLike(ms_per_row=1.0).act(observation(rows=2, seed=0))

    assert actions.shape == (2, 8, 7)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core for the server, one for the client")
def test_given_requests_always_queued_then_the_server_merges_them_and_reports_its_gap_per_call() -> None:
    cores = os.sched_getaffinity(0)
    row = saturate(ms_per_row=5.0, seconds=2.0, threads=4, inflight=4)

    assert row["policy_calls"] > 0
    assert row["mean_rows_per_call"] > 1.0  # requests that queued while the model was busy were merged
    assert row["gap_ms_per_call"] is not None and 0.0 < row["model_busy"] <= 1.0
    assert os.sched_getaffinity(0) == cores  # the server was pinned to one core, then given them all back
