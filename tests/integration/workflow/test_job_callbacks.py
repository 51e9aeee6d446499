"""The Job side of the callbacks: real ``python -m infra_probes`` / ``python -m eval_runner`` processes
answer a waiting Step Functions task through the API (moto server on loopback), as Jobs do on EKS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from moto.server import ThreadedMotoServer

from rlinf_aws.task_callback import HEARTBEAT_ENV, TOKEN_ENV
from tests.integration.workflow.conftest import free_port

pytestmark = pytest.mark.usefixtures("aws_env")
REGION = "us-east-1"
# One waiting task that hands its token to a queue (where the "Job" picks it up), then keeps what it is sent.
WAITER = {
    "StartAt": "Wait",
    "States": {
        "Wait": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {"QueueUrl": "QUEUE", "MessageBody": {"token.$": "$$.Task.Token"}},
            "HeartbeatSeconds": 60,
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}],
            "End": True,
        },
        "Caught": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def moto_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    from rlinf_local.moto_patches import moto_fixes

    port = free_port()
    monkeypatch.setenv("MOTO_PORT", str(port))  # the engine's own AWS calls go to this server
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    url = f"http://127.0.0.1:{port}"
    requests.post(f"{url}/moto-api/config", json={"stepfunctions": {"execute_state_machine": True}}, timeout=10)
    try:
        with moto_fixes():
            yield url
    finally:
        server.stop()


def start_waiting(url: str) -> tuple[str, str, Any]:
    sfn = boto3.client("stepfunctions", region_name=REGION, endpoint_url=url)
    sqs = boto3.client("sqs", region_name=REGION, endpoint_url=url)
    queue = sqs.create_queue(QueueName=f"tokens-{time.monotonic_ns()}")["QueueUrl"]
    definition = json.dumps(WAITER).replace("QUEUE", queue)
    arn = sfn.create_state_machine(
        name=f"waiter-{time.monotonic_ns()}", definition=definition, roleArn="arn:aws:iam::123456789012:role/x"
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    for _ in range(100):
        messages = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages", [])
        if messages:
            return execution, json.loads(messages[0]["Body"])["token"], sfn
    raise AssertionError("the waiting task never handed out its token")


def job_env(url: str, token: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({TOKEN_ENV: token, HEARTBEAT_ENV: "30", "AWS_ENDPOINT_URL": url, "RLINF_BENCH_JOB_NAME": "probe-x"})
    return env


def finished(sfn: Any, execution: str) -> dict[str, Any]:
    for _ in range(200):
        desc = sfn.describe_execution(executionArn=execution)
        if desc["status"] != "RUNNING":
            return dict(desc)
        time.sleep(0.1)
    raise AssertionError("the execution did not finish")


def test_a_probe_job_reports_its_result_uri_with_send_task_success(moto_server: str, tmp_path: Path) -> None:
    execution, token, sfn = start_waiting(moto_server)
    out = tmp_path / "storage.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "infra_probes",
            "storage",
            "--path",
            str(tmp_path),
            "--size",
            "8M",
            "--block-size",
            "1M",
            "--json",
            "--out",
            str(out),
        ],
        env=job_env(moto_server, token),
        capture_output=True,
        text=True,
        timeout=300,
    )
    desc = finished(sfn, execution)
    assert desc["status"] == "SUCCEEDED", proc.stderr[-2000:]
    callback = json.loads(desc["output"])
    assert callback["kind"] == "probe" and callback["probe"] == "storage"
    assert callback["result_uri"] == str(out) and out.exists()
    assert callback["job_name"] == "probe-x"
    assert token not in proc.stdout + proc.stderr  # a token is never logged


def test_an_eval_job_with_bad_input_reports_the_error_with_send_task_failure(moto_server: str) -> None:
    execution, token, sfn = start_waiting(moto_server)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eval_runner",
            "--suite",
            "libero_nowhere",
            "--policy",
            "builtin:zero",
            "--trials",
            "1",
            "--no-progress",
        ],
        env=job_env(moto_server, token),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    desc = finished(sfn, execution)
    error = json.loads(desc["output"])["error"]
    assert "libero_nowhere" in error["Cause"], error
    assert token not in proc.stdout + proc.stderr
