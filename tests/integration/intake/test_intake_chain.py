"""S3 puts -> EventBridge -> rule -> SQS -> poller -> the real checkpoint_router handler, all in moto."""

from __future__ import annotations

import json

import pytest

from rlinf_aws.execution_names import execution_name
from rlinf_bench.contracts import EvalRequest, request_id_for
from rlinf_bench.intake.router import Outcome
from tests.integration.intake.conftest import Intake
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects

ROOT = "runs/openvla-libero10/checkpoints/global_step_100"
RANKS = 64


@pytest.mark.parametrize("metadata_at", ["first", "middle", "last"])
def test_given_a_full_fsdp_export_in_any_order_when_events_flow_then_exactly_one_execution_with_the_request(
    intake: Intake, metadata_at: str
) -> None:
    put_objects(intake.s3, intake.stack.bucket, ROOT, fsdp_objects(RANKS, metadata_at=metadata_at))  # type: ignore[arg-type]

    intake.settle()

    executions = intake.executions()
    assert len(executions) == 1
    request = EvalRequest.from_json(executions[0]["input"])
    assert request.checkpoint.uri == f"s3://{intake.stack.bucket}/{ROOT}"
    assert (request.checkpoint.experiment, request.checkpoint.global_step) == ("openvla-libero10", 100)
    assert request.checkpoint.layout.value == "fsdp_dcp"
    assert request.request_id == request_id_for(request.checkpoint)
    # <checkpoint id>-m<eval matrix hash>-a<attempt>: the same checkpoint and matrix always get this name.
    assert executions[0]["name"] == execution_name(request) == f"{request.request_id}-m{request.digest()}-a1"
    assert [s.name for s in request.suites] == ["libero_spatial", "libero_object", "libero_goal", "libero_10"]
    assert (request.runs, request.trials_per_task) == (3, 50)
    # The rule let only the weights file through (a multipart upload emits two events in moto): shard
    # events never reached the function.
    assert {r.key.rsplit("/", 1)[-1] for r in intake.results} == {"full_weights.pt"}
    assert not intake.poller.in_flight


def test_given_shards_without_the_last_file_when_events_flow_then_nothing_starts_until_it_arrives(
    intake: Intake,
) -> None:
    objects = fsdp_objects(RANKS, metadata_at="first")
    weights = objects.pop()
    put_objects(intake.s3, intake.stack.bucket, ROOT, objects)
    intake.settle()
    assert intake.executions() == []

    put_objects(intake.s3, intake.stack.bucket, ROOT, [weights])
    intake.settle()
    assert len(intake.executions()) == 1


def test_given_a_missing_shard_when_the_weights_arrive_then_the_event_waits_and_starts_once_the_shard_lands(
    intake: Intake,
) -> None:
    objects = fsdp_objects(RANKS, metadata_at="first")
    missing = next(o for o in objects if o[0].endswith("/__7_0.distcp"))  # a shard FSx has not exported yet
    objects.remove(missing)
    put_objects(intake.s3, intake.stack.bucket, ROOT, objects)
    intake.settle(rounds=3)

    assert intake.executions() == []
    assert intake.poller.in_flight == 2  # the two weights events, deferred, not dropped
    deferred = intake.outcomes(Outcome.DEFERRED)
    assert deferred and "DCP shard ranks missing 7" in deferred[-1].reason

    put_objects(intake.s3, intake.stack.bucket, ROOT, [missing])
    intake.settle()
    assert len(intake.executions()) == 1
    assert not intake.poller.in_flight


def test_given_each_event_three_times_for_two_interleaved_checkpoints_then_one_execution_each(
    intake: Intake,
) -> None:
    roots = [ROOT, "runs/openvla-libero10/checkpoints/global_step_125"]
    exports = [fsdp_objects(16, metadata_at="middle"), fsdp_objects(16, metadata_at="first")]
    for a, b in zip(*exports, strict=True):  # interleave the two exports object by object
        put_objects(intake.s3, intake.stack.bucket, roots[0], [a])
        put_objects(intake.s3, intake.stack.bucket, roots[1], [b])
    # Take what EventBridge delivered and deliver each message three times, interleaved.
    bodies = []
    while msgs := intake.sqs.receive_message(QueueUrl=intake.stack.queue_url, MaxNumberOfMessages=10).get("Messages"):
        for m in msgs:
            bodies.append(m["Body"])
            intake.sqs.delete_message(QueueUrl=intake.stack.queue_url, ReceiptHandle=m["ReceiptHandle"])
    assert len(bodies) == 4  # two weights events per checkpoint (multipart)
    for _ in range(3):
        for body in bodies:
            intake.send(body)

    intake.settle()

    names = sorted(e["name"] for e in intake.executions())
    assert len(names) == 2 and len(set(names)) == 2
    assert {json.loads(e["input"])["checkpoint"]["global_step"] for e in intake.executions()} == {100, 125}
    assert len(intake.outcomes(Outcome.STARTED)) == 2
    assert len(intake.outcomes(Outcome.DUPLICATE)) == 12 - 2
