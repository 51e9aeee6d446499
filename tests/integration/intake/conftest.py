"""A moto account with the intake chain: S3 (EventBridge on) -> rule -> SQS (+DLQ) -> poller -> real handler."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.router_lambda import build_router, make_handler
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Outcome, RecordResult
from rlinf_local.intake_resources import IntakeStack, create_intake_stack
from rlinf_local.replay_events import VirtualClock
from rlinf_local.sqs_poller import SqsPoller

REGION = "us-east-1"
QUIET_S = 30.0


@dataclass
class Intake:
    stack: IntakeStack
    s3: Any
    sqs: Any
    sfn: Any
    clock: VirtualClock
    poller: SqsPoller
    results: list[RecordResult] = field(default_factory=list)

    def settle(self, rounds: int = 5) -> None:
        """Deliver everything, then let deferred records come back after the quiet period, a few times."""
        self.poller.drain()
        for _ in range(rounds):
            if not self.poller.in_flight:
                return
            self.clock.advance(QUIET_S + 1)
            self.poller.release()
            self.poller.drain()

    def executions(self) -> list[dict[str, Any]]:
        listed = self.sfn.list_executions(stateMachineArn=self.stack.state_machine_arn)["executions"]
        return [self.sfn.describe_execution(executionArn=e["executionArn"]) for e in listed]

    def inputs(self) -> list[dict[str, Any]]:
        return [json.loads(e["input"]) for e in self.executions()]

    def outcomes(self, outcome: Outcome) -> list[RecordResult]:
        return [r for r in self.results if r.outcome is outcome]

    def send(self, body: str) -> None:
        self.sqs.send_message(QueueUrl=self.stack.queue_url, MessageBody=body)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


def make_intake(
    config: IntakeConfig | None = None, *, eventbridge: bool = True, max_receive_count: int = 1000
) -> Intake:
    stack = create_intake_stack(
        boto3.client, region=REGION, eventbridge=eventbridge, max_receive_count=max_receive_count
    )
    clock = VirtualClock()
    results: list[RecordResult] = []
    cfg = config or IntakeConfig(quiet_period_s=QUIET_S)
    handler = make_handler(
        lambda: build_router(stack.settings(), boto3.client, clock=clock, observer=results.append, config=cfg)
    )
    sqs = boto3.client("sqs")
    poller = SqsPoller(sqs, stack.queue_url, handler, region=REGION)
    return Intake(stack, boto3.client("s3"), sqs, boto3.client("stepfunctions"), clock, poller, results)


@pytest.fixture
def intake(aws: None) -> Intake:
    return make_intake()
