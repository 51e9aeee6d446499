"""template.yaml's intake part agrees with the code (rule filter = layouts' last files) and lints clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rlinf_local.intake_resources import last_file_patterns
from rlinf_local.stack import read_template

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def resources() -> dict[str, Any]:
    return dict(read_template(REPO / "template.yaml")["Resources"])


def test_given_the_rule_then_it_forwards_exactly_the_layouts_last_files(resources: dict[str, Any]) -> None:
    pattern = resources["CheckpointCreatedRule"]["Properties"]["EventPattern"]
    assert pattern["detail-type"] == ["Object Created"]
    assert pattern["detail"]["object"]["key"] == last_file_patterns()


def test_given_the_queue_and_function_then_failures_are_partial_and_dead_letters_are_kept(
    resources: dict[str, Any],
) -> None:
    queue = resources["IntakeQueue"]["Properties"]
    event = resources["CheckpointRouterFunction"]["Properties"]["Events"]["IntakeQueue"]["Properties"]
    env = resources["CheckpointRouterFunction"]["Properties"]["Environment"]["Variables"]
    assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] * queue["VisibilityTimeout"] > 21600  # outlives MaxAgeSeconds
    assert {"STATE_MACHINE_ARN", "IDEMPOTENCY_TABLE", "DEAD_LETTER_QUEUE_URL"} <= set(env)
    bucket = resources["CheckpointBucket"]["Properties"]
    assert bucket["NotificationConfiguration"]["EventBridgeConfiguration"]["EventBridgeEnabled"] is True


@pytest.mark.skipif(shutil.which("cfn-lint") is None, reason="cfn-lint is not installed (pip install cfn-lint)")
def test_given_the_template_then_cfn_lint_passes() -> None:
    out = subprocess.run(["cfn-lint", "template.yaml"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_given_the_end_event_rule_then_an_end_event_that_fails_lands_in_a_kept_queue(resources: dict[str, Any]) -> None:
    router = resources["CheckpointRouterFunction"]["Properties"]
    rule = router["Events"]["ExecutionEnded"]["Properties"]
    queue = {"GetAtt": "ExecutionEndedDeadLetterQueue.Arn"}
    assert rule["DeadLetterConfig"]["Arn"] == queue  # EventBridge could not hand it over
    assert router["DeadLetterQueue"] == {"Type": "SQS", "TargetArn": queue}  # the function failed on it
    assert router["EventInvokeConfig"]["MaximumRetryAttempts"] == 2
    assert resources["ExecutionEndedDeadLetterQueue"]["DeletionPolicy"] == "Retain"
    statement = resources["ExecutionEndedDeadLetterQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"] == {
        "GetAtt": "CheckpointRouterFunctionExecutionEnded.Arn"
    }
