"""The contracts round-trip through JSON and reject documents a reader cannot trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_bench.contracts import (
    PUBLISHED,
    CheckpointRef,
    EpisodeResult,
    EvalRequest,
    RunResult,
    RunStatus,
    TaskResult,
    dumps_schema,
)
from rlinf_bench.errors import ContractError

CKPT = CheckpointRef(uri="s3://bkt/runs/exp1/checkpoints/global_step_100", experiment="exp1", global_step=100)


def _run_result() -> RunResult:
    eps = [EpisodeResult(init_state=i, seed=7 + i, success=i % 2 == 0, steps=10, wall_s=0.5) for i in range(4)]
    task = TaskResult.from_episodes(0, "pick_up_the_bowl", 4, eps)
    base = RunResult(
        suite="libero_spatial",
        run_index=0,
        seed=0,
        policy="builtin:zero",
        checkpoint=CKPT,
        status=RunStatus.COMPLETE,
        trials_per_task=4,
        max_steps=220,
        settle_steps=10,
    )
    return base.with_tasks([task])


def test_run_result_round_trips_through_json() -> None:
    result = _run_result()
    again = RunResult.from_json(result.to_json())
    assert again == result
    assert again.success_rate == 0.5
    assert again.tasks[0].successes == 2


def test_wrong_schema_version_names_the_file_and_field(tmp_path: Path) -> None:
    data = json.loads(_run_result().to_json())
    data["schema_version"] = "2.0"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ContractError) as err:
        RunResult.load(path)
    assert str(path) in str(err.value)
    assert "schema_version" in str(err.value)


def test_missing_field_is_named() -> None:
    data = json.loads(_run_result().to_json())
    del data["suite"]
    with pytest.raises(ContractError, match="field suite"):
        RunResult.from_dict(data, source="run0.json")


def test_inconsistent_totals_are_rejected() -> None:
    data = json.loads(_run_result().to_json())
    data["successes"] = 4
    with pytest.raises(ContractError, match="successes"):
        RunResult.from_dict(data)


def test_request_expands_into_one_run_per_suite_and_seed() -> None:
    req = EvalRequest.from_dict(
        {"checkpoint": CKPT.model_dump(), "suites": [{"name": "libero_spatial"}, {"name": "libero_10"}]}
    )
    runs = req.expand()
    assert [(r.suite, r.run_index, r.seed) for r in runs] == [
        ("libero_spatial", 0, 0),
        ("libero_spatial", 1, 1),
        ("libero_spatial", 2, 2),
        ("libero_10", 0, 0),
        ("libero_10", 1, 1),
        ("libero_10", 2, 2),
    ]
    # the same checkpoint always gets the same request id (idempotent submission)
    assert req.request_id == EvalRequest(checkpoint=CKPT).request_id


def test_repeated_seeds_are_rejected() -> None:
    with pytest.raises(ContractError, match="distinct seed"):
        EvalRequest.from_dict({"checkpoint": CKPT.model_dump(), "seeds": [1, 1, 2]})


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_committed_schemas_are_current(name: str) -> None:
    committed = Path(__file__).parents[3] / "docs" / "schemas" / f"{name}.schema.json"
    assert committed.read_text() == dumps_schema(PUBLISHED[name])
