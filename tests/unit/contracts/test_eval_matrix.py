"""EvalMatrix: one set of fields and defaults for requests and the intake, and a stable digest of it."""

from __future__ import annotations

import json

from rlinf_bench.contracts import CheckpointRef, EvalRequest, ProbeName
from rlinf_bench.contracts.request import EVAL_MATRIX_FIELDS, EvalMatrix
from rlinf_bench.intake.config import IntakeConfig

CKPT = CheckpointRef(uri="s3://b/exp/checkpoints/global_step_10", experiment="exp", global_step=10)


def test_given_no_matrix_fields_then_request_and_intake_both_follow_the_brief() -> None:
    request = EvalRequest(checkpoint=CKPT)
    from_intake = IntakeConfig().request_for(CKPT)

    assert from_intake == request
    assert [s.name for s in request.suites] == ["libero_spatial", "libero_object", "libero_goal", "libero_10"]
    assert (request.runs, request.trials_per_task, request.seeds) == (3, 50, [0, 1, 2])
    assert [p.name for p in request.probes] == [ProbeName.GPU, ProbeName.NCCL]  # those that start without args
    assert request.baselines == ["libero/openvla-oft-rlinf", "previous", "best"]


def test_an_eval_request_is_flat_json_checkpoint_fields_plus_the_matrix_fields() -> None:
    data = json.loads(EvalRequest(checkpoint=CKPT).to_json())

    assert set(data) == {"schema_version", "request_id", "checkpoint", "attempt"} | EVAL_MATRIX_FIELDS
    assert set(EvalMatrix.model_fields) == EVAL_MATRIX_FIELDS
    assert EvalRequest.from_json(json.dumps(data)) == EvalRequest(checkpoint=CKPT)


def test_given_short_forms_in_a_request_then_suites_and_probes_expand() -> None:
    request = EvalRequest.from_dict(
        {"checkpoint": CKPT.model_dump(), "suites": ["libero_10"], "probes": ["gpu", {"name": "nccl", "nodes": 2}]}
    )
    assert [s.name for s in request.suites] == ["libero_10"]
    assert [(p.name, p.nodes) for p in request.probes] == [(ProbeName.GPU, 1), (ProbeName.NCCL, 2)]


def test_the_digest_names_the_matrix_and_nothing_else() -> None:
    base = EvalRequest(checkpoint=CKPT)
    digest = base.digest()

    assert len(digest) == 8 and int(digest, 16) >= 0
    # Which checkpoint, its id and the attempt are not part of the matrix.
    other_ckpt = CheckpointRef(uri="s3://b/exp/checkpoints/global_step_20", experiment="exp", global_step=20)
    assert EvalRequest(checkpoint=other_ckpt, attempt=2).digest() == digest
    # The intake's own settings are not either: the same matrix from the intake has the same digest.
    assert IntakeConfig(quiet_period_s=5).digest() == digest == IntakeConfig().request_for(CKPT).digest()
    # Any matrix field changes it.
    assert EvalRequest(checkpoint=CKPT, trials_per_task=10).digest() != digest
    assert EvalRequest(checkpoint=CKPT, suites=["libero_10"]).digest() != digest
    assert EvalRequest(checkpoint=CKPT, extra={"note": "x"}).digest() != digest


def test_the_digest_is_stable_across_processes_and_field_order() -> None:
    # Execution names carry it: a re-parsed or re-ordered matrix must name the same evaluation.
    matrix = EvalMatrix(suites=["libero_goal"], runs=1, seeds=[7], probes=[], baselines=[], policy="builtin:zero")
    assert matrix.digest() == EvalMatrix.model_validate(json.loads(matrix.model_dump_json())).digest()
    reordered = dict(reversed(list(matrix.model_dump(mode="json").items())))
    assert EvalMatrix.model_validate(reordered).digest() == matrix.digest()


def test_videos_default_to_a_few_per_task_reach_every_eval_run_and_leave_the_digest_alone() -> None:
    request = EvalRequest(checkpoint=CKPT, output_prefix="s3://results")
    assert request.videos == 2
    assert {run.videos for run in request.expand()} == {2}  # pipeline, watch and trigger record them
    assert {run.videos for run in request.model_copy(update={"videos": 0}).expand()} == {0}
    # recording is not measuring: the same matrix with other videos keeps its digest (and its finished runs)
    assert request.model_copy(update={"videos": 5}).digest() == request.digest()
