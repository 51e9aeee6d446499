"""A real LIBERO rollout through the whole runner produces a complete, schema-valid RunResult."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from eval_runner.loop import evaluate
from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.seeding import episode_seed
from tests.sim.helpers import REPO, make_run, settings

pytestmark = pytest.mark.sim


def test_given_one_task_one_trial_when_evaluated_then_the_result_is_complete_schema_valid_and_traceable(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "result.json"
    snapshots: list[RunResult] = []

    result = evaluate(
        make_run(), out_path=out, settings=settings(libero_cache), command=["test"], on_episode=snapshots.append
    )

    on_disk = json.loads(out.read_text())
    jsonschema.validate(on_disk, json.loads((REPO / "docs/schemas/run-result.schema.json").read_text()))
    assert RunResult.load(out) == result
    assert result.status is RunStatus.COMPLETE and result.error is None
    [task] = result.tasks
    assert task.task_name == "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate"
    assert task.language == "pick up the black bowl between the plate and the ramekin and place it on the plate"
    [episode] = task.episodes
    # The zero policy never moves the arm: the episode runs to the horizon and fails.
    assert (episode.steps, episode.success, episode.retries) == (5, False, 0)
    assert episode.seed == episode_seed(0, "libero_spatial", 0, 0)
    assert (result.max_steps, result.settle_steps) == (5, 10)
    assert result.timings.env_steps == 5 and result.timings.policy_calls == 5
    assert result.timings.env_setup_s > 0 and result.timings.sim_s > 0
    prov = result.provenance
    assert prov.packages["rlinf-libero"] == "0.1.3" and "mujoco" in prov.packages and "robosuite" in prov.packages
    assert prov.rendering_backend.startswith("egl") and prov.command == ["test"] and prov.cpu_count >= 1
    assert prov.extra["throughput"]["policy_calls_per_vector_step"] == 1.0
    # after its episode, and before the final write, the run reported itself in progress
    assert [(s.status, s.episodes) for s in snapshots] == [(RunStatus.INCOMPLETE, 1)]
