"""Experiment names that are not plain ASCII flow through the real router on moto: each complete checkpoint
starts exactly once, under an id every later check accepts, and nothing waits out ``max_age_s`` in retries."""

from __future__ import annotations

import json

import pytest

from rlinf_bench.contracts import EvalRequest
from rlinf_bench.contracts.identifiers import check_request_id
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Outcome
from rlinf_local.intake_resources import read_dead_letters
from tests.integration.intake.conftest import QUIET_S, Intake, make_intake
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects

#: Run folders (everything up to checkpoints/) whose experiment name the intake must carry.
RUNS = (
    "runs/实验",
    "runs/café-run",
    "runs/🤖-agent",
    "alice/训练",
    "bob/训练",  # the same experiment name under another user's prefix is another run
    "runs/" + "模型-" * 60,  # a name far longer than any id may be
    "runs/ppo²",
)
STEPS = (100, 200)


def _burst(intake: Intake) -> list[str]:
    roots = [f"{run}/checkpoints/global_step_{step}" for run in RUNS for step in STEPS]
    for root in roots:
        put_objects(intake.s3, intake.stack.bucket, root, fsdp_objects(2, metadata_at="first"))
    # Every message delivered twice more: duplicates of a burst, as SQS and EventBridge may deliver them.
    bodies = []
    while msgs := intake.sqs.receive_message(QueueUrl=intake.stack.queue_url, MaxNumberOfMessages=10).get("Messages"):
        for m in msgs:
            bodies.append(m["Body"])
            intake.sqs.delete_message(QueueUrl=intake.stack.queue_url, ReceiptHandle=m["ReceiptHandle"])
    for _ in range(3):
        for body in bodies:
            intake.send(body)
    return [f"s3://{intake.stack.bucket}/{root}" for root in roots]


@pytest.mark.parametrize("max_running", [0, 1])
def test_given_a_burst_under_non_ascii_experiment_names_then_every_complete_checkpoint_starts_exactly_once(
    aws: None, max_running: int
) -> None:
    config = IntakeConfig(quiet_period_s=QUIET_S, backlog={"max_running": max_running, "when_free": "all"})  # type: ignore[arg-type]
    intake = make_intake(config)
    expected = _burst(intake)

    intake.settle()

    inputs = [EvalRequest.from_json(e["input"]) for e in intake.executions()]
    started = sorted(r.checkpoint.uri for r in inputs)
    first_steps = sorted(u for u in expected if u.endswith(f"global_step_{STEPS[0]}"))
    assert started == (sorted(expected) if not max_running else first_steps)
    assert len({r.request_id for r in inputs}) == len(inputs)  # alice/训练 and bob/训练 do not collide
    for request in inputs:
        assert check_request_id(request.request_id) == request.request_id
        assert request.request_id.isascii()
    assert read_dead_letters(intake.sqs, intake.stack.dlq_url) == []
    assert not intake.poller.in_flight  # nothing left retrying until max_age_s
    assert not intake.outcomes(Outcome.DEAD_LETTERED)


def test_given_a_non_ascii_run_the_experiment_name_survives_in_the_request(intake: Intake) -> None:
    root = "runs/实验/checkpoints/global_step_7"
    put_objects(intake.s3, intake.stack.bucket, root, fsdp_objects(2, metadata_at="first"))

    intake.settle()

    (execution,) = intake.executions()
    request = json.loads(execution["input"])
    assert request["checkpoint"]["experiment"] == "实验"
    assert execution["name"].isascii() and len(execution["name"]) <= 80
