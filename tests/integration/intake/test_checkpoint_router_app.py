"""The Lambda entry point itself (functions/checkpoint_router/app.py) against moto, with the sample events."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest

from rlinf_bench.errors import ConfigError
from rlinf_local.intake_resources import create_intake_stack, read_dead_letters
from rlinf_local.lambdas import LocalLambdaContext
from tests.integration.intake.conftest import REGION
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects

REPO = Path(__file__).resolve().parents[3]
APP_DIR = REPO / "functions" / "checkpoint_router"


def load_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("checkpoint_router_app", APP_DIR / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((REPO / "events" / name).read_text())
    for record in event["Records"]:  # as if just sent: the sample's timestamp would be past max age
        record["attributes"]["SentTimestamp"] = str(int(time.time() * 1000))
    return event


def test_given_the_sample_sqs_batch_when_the_lambda_handles_it_then_one_start_one_filter_one_dead_letter(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = create_intake_stack(boto3.client, region=REGION, eventbridge=False)
    root = "runs/openvla-libero10/checkpoints/global_step_100"
    put_objects(boto3.client("s3"), stack.bucket, root, fsdp_objects(8, metadata_at="first"), multipart_weights=False)
    monkeypatch.setenv("STATE_MACHINE_ARN", stack.state_machine_arn)
    monkeypatch.setenv("IDEMPOTENCY_TABLE", stack.table)
    monkeypatch.setenv("DEAD_LETTER_QUEUE_URL", stack.dlq_url)
    monkeypatch.setenv("QUIET_PERIOD_S", "0")
    app = load_app()

    response = app.lambda_handler(sample("sqs-eventbridge-batch.json"), LocalLambdaContext())
    again = app.lambda_handler(sample("sqs-eventbridge-batch.json"), LocalLambdaContext())

    assert response == again == {"batchItemFailures": []}
    sfn = boto3.client("stepfunctions")
    [execution] = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    assert execution["name"].startswith("openvla-libero10-s100-")
    dead = read_dead_letters(boto3.client("sqs"), stack.dlq_url)
    # The same batch received twice: the unreadable message is dead-lettered once, not once per receive.
    assert [d["body"] for d in dead] == ["{not json"]


def test_given_no_state_machine_variable_when_the_module_loads_then_the_error_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("STATE_MACHINE_ARN", raising=False)
    monkeypatch.setenv("IDEMPOTENCY_TABLE", "t")
    monkeypatch.setenv("DEAD_LETTER_QUEUE_URL", "u")

    with pytest.raises(ConfigError, match="STATE_MACHINE_ARN"):
        load_app()


def test_given_a_cold_interpreter_when_the_handler_module_is_imported_then_no_kubernetes_or_mlflow() -> None:
    code = (
        "import sys, app; heavy = sorted({m.split('.')[0] for m in sys.modules} & {'kubernetes', 'mlflow', 'torch'});"
        "print(heavy)"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": REGION,
        "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:x",
        "IDEMPOTENCY_TABLE": "t",
        "DEAD_LETTER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
        "PYTHONPATH": str(REPO),
    }
    out = subprocess.run([sys.executable, "-c", code], cwd=APP_DIR, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
