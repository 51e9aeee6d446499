"""A real evaluation through ``server:``: LIBERO images travel to a websocket policy server and back."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.loop import evaluate
from eval_runner.policies.factory import load_policy
from eval_runner.policies.server import PolicyServer
from rlinf_bench.contracts import RunStatus
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


def test_given_a_policy_server_when_evaluated_with_two_workers_then_each_vector_step_is_one_batched_request(
    tmp_path: Path, libero_cache: Path
) -> None:
    ckpt = Path(write_demo_checkpoint(tmp_path / "ckpt").uri)
    policy = load_policy("builtin:demo?cameras=agentview&resolution=32", ckpt)

    with PolicyServer(policy, port=0) as server:
        run = make_run(policy=f"server:{server.url}", trials_per_task=2, workers=2, max_steps=20)
        result = evaluate(run, out_path=tmp_path / "r.json", settings=settings(libero_cache))

    assert result.status is RunStatus.COMPLETE and result.episodes == 2
    assert server.requests == result.timings.policy_calls  # one request per vector step
    assert sum(server.batch_sizes) == result.timings.env_steps == 40
    # the batches the runner formed (rows from both workers when both were stepping) are what travelled
    mean_batch = result.provenance.extra["throughput"]["mean_batch"]
    assert sum(server.batch_sizes) / len(server.batch_sizes) == pytest.approx(mean_batch)
    assert set(server.batch_sizes) <= {1, 2}
    # provenance comes from the server's metadata: the weights it serves
    assert result.provenance.checkpoint_sha256 == policy.describe()["weights_sha256"]
