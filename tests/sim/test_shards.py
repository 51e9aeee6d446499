"""A suite-run split in 3 shards gives the same episodes as 1 shard, in the real simulator.

Each shard is the EvalRun the planner makes for its Job (rlinf_bench.sharding: a task subset and its own
file); the merged RunResult (rlinf_bench.stats.shards) must be the unsharded run's episode for episode,
and every episode's trajectory must be the same step for step. A tiny budget: 3 tasks, 2 initial states,
12 steps, the demo policy called row by row (batched matmuls round by batch composition).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.loop import evaluate
from eval_runner.policies.factory import load_policy
from rlinf_bench.contracts import EvalRequest, RunStatus, SuiteSelection
from rlinf_bench.sharding import expand_shards
from rlinf_bench.stats.shards import ShardPart, merge_shards
from tests.sim.helpers import ProprioRecording, episode_rows, settings

pytestmark = pytest.mark.sim


def test_given_3_shards_then_the_merged_run_has_the_unsharded_runs_episodes_and_trajectories(
    tmp_path: Path, libero_cache: Path
) -> None:
    ref = write_demo_checkpoint(tmp_path / "ckpt")
    request = EvalRequest(
        checkpoint=ref,
        suites=[SuiteSelection(name="libero_spatial", tasks=[0, 1, 2], max_steps=12)],
        runs=1,
        seeds=[7],
        trials_per_task=2,
        policy="builtin:demo",
        workers=1,
        videos=0,
        protocol="oft",
        output_prefix=str(tmp_path / "out"),
        baselines=[],
        probes=[],
        shards=3,
    )
    shards = expand_shards(request)
    assert [s.run.task_ids for s in shards] == [[0], [1], [2]]

    whole = ProprioRecording(load_policy("builtin:demo", Path(ref.uri)))
    (run,) = request.expand()
    unsharded = evaluate(run, out_path=tmp_path / "whole.json", policy=whole, settings=settings(libero_cache))

    split = ProprioRecording(load_policy("builtin:demo", Path(ref.uri)))
    parts = []
    for s in shards:
        assert s.run.output_uri
        result = evaluate(s.run, out_path=Path(s.run.output_uri), policy=split, settings=settings(libero_cache))
        parts.append(ShardPart(s.label, tuple(s.run.task_ids or ()), s.run.output_uri, result=result))
    merged = merge_shards(parts)

    assert merged is not None and merged.status == RunStatus.COMPLETE
    assert episode_rows(merged) == episode_rows(unsharded) and len(episode_rows(merged)) == 6
    assert [t.model_dump(exclude={"episodes"}) for t in merged.tasks] == [
        t.model_dump(exclude={"episodes"}) for t in unsharded.tasks
    ]
    assert set(split.seen) == set(whole.seen) and len(whole.seen) == 6
    for episode_id in whole.seen:
        assert np.array_equal(np.stack(split.seen[episode_id]), np.stack(whole.seen[episode_id])), episode_id
