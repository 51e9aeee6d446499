"""Identifiers that become path segments are refused where they enter, with the field named: a hand-written
execution input cannot put result files outside the results prefix."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rlinf_bench.contracts import CheckpointRef, EvalRequest, EvalRun
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
