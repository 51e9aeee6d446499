"""Identifiers that become path segments are refused where they enter, with the field named: a hand-written
execution input cannot put result files outside the results prefix."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rlinf_bench.contracts import CheckpointRef, EvalRequest, EvalRun
from rlinf_bench.contracts.identifiers import MAX_REQUEST_ID
from rlinf_bench.contracts.workflow import PlanInput
from rlinf_bench.errors import ContractError

CKPT = {"uri": "s3://b/runs/exp/checkpoints/global_step_7", "experiment": "exp", "global_step": 7}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"request_id": "../../outside"}, "request.request_id"),
        ({"request_id": "a/b"}, "request.request_id"),
        ({"request_id": "exp-s7\n"}, "request.request_id"),
        ({"request_id": ".."}, "request.request_id"),
        ({"suites": [{"name": "../../libero_spatial"}]}, "request.suites.0.name"),
        ({"suites": ["libero_spatial/"]}, "request.suites.0.name"),
        ({"suites": [{"name": "libero\x1b[2J"}]}, "request.suites.0.name"),
    ],
)
def test_a_hand_written_execution_input_with_a_bad_path_segment_is_refused_naming_the_field(
    change: dict[str, Any], field: str
) -> None:
    body = {"request": {"checkpoint": CKPT, **change}, "execution": "x"}
    with pytest.raises(ValidationError) as info:
        PlanInput.model_validate(body)  # what the Plan Lambda's event parser does
    assert field in ".".join(str(p) for p in info.value.errors()[0]["loc"])
    assert "path" in str(info.value) or "request id" in str(info.value)


def test_an_eval_run_with_a_parent_directory_request_id_is_refused_naming_the_source() -> None:
    run = {"request_id": "../x", "checkpoint": CKPT, "suite": "libero_spatial", "run_index": 0, "seed": 0}
    with pytest.raises(ContractError) as info:
        EvalRun.from_dict(run, source="--request (inline JSON)")
    assert "--request (inline JSON)" in str(info.value) and "request_id" in str(info.value)


def test_derived_and_ordinary_identifiers_still_pass() -> None:
    request = EvalRequest(checkpoint=CheckpointRef(**CKPT), suites=["libero_spatial", "robotwin/beat_block_hammer"])
    assert request.request_id.startswith("exp-s7-")
    assert [s.name for s in request.suites] == ["libero_spatial", "robotwin/beat_block_hammer"]
    EvalRun(request_id="local", checkpoint=CheckpointRef(**CKPT), suite="libero_10", run_index=0, seed=0)


@pytest.mark.parametrize(
    ("experiment", "readable"),
    [
        ("实验", "exp"),
        ("café-run", "cafe-run"),
        ("🤖-agent", "agent"),
        ("ppo²", "ppo2"),
        ("模型-" * 300, "exp"),
        ("Ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
        ("openvla-libero10", "openvla-libero10"),  # ASCII names keep the ids they always had
        ("My_Exp", "my-exp"),
    ],
)
def test_a_derived_request_id_of_any_experiment_name_passes_the_check_that_reads_it_back(
    experiment: str, readable: str
) -> None:
    ref = CheckpointRef(uri=f"s3://b/runs/{experiment}/checkpoints/global_step_7", experiment=experiment, global_step=7)
    request = EvalRequest(checkpoint=ref)

    assert request.request_id.startswith(f"{readable}-s7-")
    assert EvalRequest.from_json(request.to_json()).request_id == request.request_id  # the stricter read-back
    run = request.expand()[0]
    assert EvalRun.from_json(run.to_json()).request_id == request.request_id
    assert request.request_id.isascii() and len(request.request_id) <= MAX_REQUEST_ID


def test_two_experiments_whose_names_fold_alike_get_distinct_request_ids() -> None:
    ids = {
        EvalRequest(
            checkpoint=CheckpointRef(
                uri=f"s3://b/{user}/训练/checkpoints/global_step_1", experiment="训练", global_step=1
            )
        ).request_id
        for user in ("alice", "bob")
    }
    assert len(ids) == 2


def test_the_longest_step_still_gives_an_execution_name_step_functions_accepts() -> None:
    from rlinf_aws.execution_names import MAX_EXECUTION_NAME, execution_name

    ref = CheckpointRef(uri="s3://b/" + "x" * 900, experiment="e" * 200, global_step=10**12 - 1)
    request = EvalRequest(checkpoint=ref, attempt=9999)
    assert len(execution_name(request)) <= MAX_EXECUTION_NAME
    with pytest.raises(ValidationError, match="global_step"):
        CheckpointRef(uri="s3://b/x", experiment="e", global_step=10**12)


def test_a_hand_written_request_id_too_long_for_an_execution_name_is_refused_at_first_sight() -> None:
    with pytest.raises(ValidationError, match=f"at most {MAX_REQUEST_ID} letters"):
        EvalRequest(checkpoint=CheckpointRef(**CKPT), request_id="a" * (MAX_REQUEST_ID + 1))
