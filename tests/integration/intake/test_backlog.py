"""Hold the backlog on the moto stack: a burst of 10 checkpoints, limit 1, ``latest``; then backfill one."""

from __future__ import annotations

import itertools
import json
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings

from rlinf_aws.backlog_store import DynamoBacklogStore
from rlinf_aws.router_lambda import EXECUTION_STATUS_CHANGE, build_router, make_handler
from rlinf_bench.intake.backlog import State
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Outcome
from rlinf_cli.main import main
from rlinf_local.intake_resources import create_idempotency_table
from tests.integration.intake.conftest import QUIET_S, make_intake
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects
from tests.unit.intake.backlog_faults import Bucket, Faults, FaultyClient, Harness, StepFunctions
from tests.unit.intake.test_backlog_faults import ACTIONS, FAULTS, POLICIES, config, run_and_check

RUN = "runs/exp-burst"
STEPS = [25 * (i + 1) for i in range(10)]
TABLES = itertools.count()


def _ended(execution: dict[str, Any], status: str = "SUCCEEDED") -> dict[str, Any]:
    """The EventBridge event the template's ExecutionEnded rule delivers."""
    return {
        "source": "aws.states",
        "detail-type": EXECUTION_STATUS_CHANGE,
        "detail": {"status": status, "executionArn": execution["executionArn"], "input": execution["input"]},
    }


def test_given_a_burst_with_latest_and_limit_1_then_first_and_last_start_the_rest_are_superseded_and_backfillable(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = IntakeConfig(quiet_period_s=QUIET_S, backlog={"max_running": 1, "when_free": "latest"})  # type: ignore[arg-type]
    intake = make_intake(config)
    for step in STEPS:
        root = f"{RUN}/checkpoints/global_step_{step}"
        put_objects(intake.s3, intake.stack.bucket, root, fsdp_objects(2, metadata_at="first"), multipart_weights=False)

    intake.settle()

    assert [json.loads(e["input"])["checkpoint"]["global_step"] for e in intake.executions()] == [25]
    assert len(intake.outcomes(Outcome.HELD)) == 9
    handler = make_handler(lambda: build_router(intake.stack.settings(), boto3.client, config=config))
    first = intake.executions()[0]
    released = handler(_ended(first), None)
    assert handler(_ended(first), None) == {"released": []}  # a repeated end event frees nothing twice

    assert released == {"released": [f"s3://{intake.stack.bucket}/{RUN}/checkpoints/global_step_250"]}
    assert sorted(json.loads(e["input"])["checkpoint"]["global_step"] for e in intake.executions()) == [25, 250]
    store = DynamoBacklogStore(boto3.client("dynamodb"), intake.stack.settings().idempotency_table)
    states = {e.global_step: e for e in store.entries()}
    assert [s for s, e in states.items() if e.state is State.SUPERSEDED] == STEPS[1:-1]
    assert states[50].reason == "superseded by step 250 (backlog when_free=latest)"

    common = ("--state-machine-arn", intake.stack.state_machine_arn, "--quiet-period", "0", "--json")
    table = ("--backlog-table", intake.stack.settings().idempotency_table)
    assert main(["backfill", f"s3://{intake.stack.bucket}/{RUN}", "--steps", "50", *table, *common]) == 0
    rows = json.loads(capsys.readouterr().out)

    assert [(r["global_step"], r["status"]) for r in rows] == [(50, "started")]
    assert store.get(states[50].uri).state is State.BACKFILLED  # type: ignore[union-attr]
    assert sorted(json.loads(e["input"])["checkpoint"]["global_step"] for e in intake.executions()) == [25, 50, 250]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=ACTIONS, faults=FAULTS, when_free=POLICIES)
def test_the_dynamodb_store_keeps_the_backlog_promises_with_faults_at_every_call(
    aws: None, actions: list[tuple[str, str, int]], faults: Faults, when_free: str
) -> None:
    """tests/unit/intake/test_backlog_faults.py's property over the DynamoDB store's real transactions."""
    table = f"intake-{next(TABLES)}"  # every example its own table: entries() scans it whole
    dynamodb = boto3.client("dynamodb")
    create_idempotency_table(dynamodb, table)
    store = DynamoBacklogStore(FaultyClient(dynamodb, faults), table)
    harness = Harness(config(1, when_free), faults, store, StepFunctions(faults), Bucket(faults))
    run_and_check(harness, actions, 1)
