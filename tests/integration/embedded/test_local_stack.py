"""The local stack: template.yaml (samtranslator) deployed into moto with its adaptations, and status of a
deployed state machine read through the Step Functions API.

GIVEN template.yaml, WHEN the embedded default deploys it, THEN the state machine executes in moto's engine
under the ARN the router is configured with, every skipped resource is listed as an adaptation, and a
failed execution shows in ``status`` with what failed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rlinf_bench.contracts import CheckpointRef, EvalRequest, SuiteSelection
from rlinf_local.embedded import Embedded
from rlinf_local.stack import TOOLS_PYTHON, adapt_template
from rlinf_local.status_command import format_status, remote_status

pytestmark = pytest.mark.slow


@pytest.fixture
def need_samtranslator() -> None:
    if not TOOLS_PYTHON.exists():
        pytest.skip("aws-sam-translator is not installed in .venv-tools: run `make setup-sam`")


def test_adaptations_drop_what_moto_cannot_create_and_say_why() -> None:
    template = {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {}},
            "Entry": {"Type": "AWS::EKS::AccessEntry", "Properties": {}},
            "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": {}},
        }
    }
    adapted, changes = adapt_template(template)
    assert set(adapted["Resources"]) == {"Queue"}
    assert set(template["Resources"]) == {"Queue", "Entry", "Mapping"}  # the input is left as it was
    lines = [c.line() for c in changes]
    assert any("Entry" in line and "EKS" in line for line in lines)
    assert any("Mapping" in line and "poller" in line for line in lines)


def test_template_deploys_into_moto_and_a_failed_execution_shows_in_status(
    need_samtranslator: None, tmp_path: Path
) -> None:
    with Embedded(tmp_path / "out", echo=lambda _: None) as emb:
        sfn = emb.aws.client("stepfunctions")
        router_env = emb.stack.functions["CheckpointRouterFunction"][1]
        assert router_env["STATE_MACHINE_ARN"] == emb.stack.state_machine_arn
        definition = json.loads(sfn.describe_state_machine(stateMachineArn=emb.stack.state_machine_arn)["definition"])
        assert "${" not in json.dumps(definition)  # DefinitionSubstitutions applied
        # S3 -> EventBridge rule -> intake queue: only a layout's last file gets through.
        s3, sqs = emb.aws.client("s3"), emb.aws.client("sqs")
        s3.put_object(
            Bucket=emb.stack.bucket, Key="x/checkpoints/global_step_1/actor/dcp_checkpoint/.metadata", Body=b"m"
        )
        last = "x/checkpoints/global_step_1/actor/model_state_dict/full_weights.pt"
        s3.put_object(Bucket=emb.stack.bucket, Key=last, Body=b"w")
        queued = sqs.receive_message(QueueUrl=emb.stack.intake_queue_url, MaxNumberOfMessages=10)["Messages"]
        assert [json.loads(m["Body"])["detail"]["object"]["key"] for m in queued] == [last]
        assert any("DefinitionSubstitutions" in a.line() for a in emb.stack.adaptations)

        request = EvalRequest(
            checkpoint=CheckpointRef(
                uri=f"s3://{emb.stack.bucket}/x/checkpoints/global_step_1", experiment="x", global_step=1
            ),
            suites=[SuiteSelection(name="libero_nowhere")],
        )
        arn = sfn.start_execution(
            stateMachineArn=emb.stack.state_machine_arn, name="bad-suite", input=request.to_json()
        )["executionArn"]
        for _ in range(300):
            if sfn.describe_execution(executionArn=arn)["status"] != "RUNNING":
                break
            time.sleep(0.2)
        (summary,) = remote_status(emb.stack.state_machine_arn, sfn=sfn)
        emails = emb.email.drain()
    assert summary.status == "FAILED" and summary.name == "bad-suite"
    assert summary.failures and "bad-suite" in format_status([summary])
    (email,) = emails
    assert "libero_nowhere" in email.read_text()  # the failure notice names the bad field's value
