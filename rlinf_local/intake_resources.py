"""The intake's AWS resources, created in whatever account the clients point at (moto, in practice).

Mirrors template.yaml: an EventBridge-enabled bucket, a rule on "Object Created" for the layouts'
last files, the intake queue with its DLQ, the idempotency table and a state machine. Used by
``replay-events``, the integration tests and the benchmark, so all of them exercise the same chain.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlinf_aws.router_lambda import RouterSettings
from rlinf_bench.checkpoints.layouts import LAYOUTS

#: A stand-in state machine until the evaluation workflow is deployed next to the intake.
PASS_ASL = {"Comment": "intake stand-in", "StartAt": "Accepted", "States": {"Accepted": {"Type": "Pass", "End": True}}}
FAKE_ROLE_ARN = "arn:aws:iam::123456789012:role/rlinf-bench-local"


def last_file_patterns() -> list[dict[str, str]]:
    """EventBridge wildcard filters matching every layout's last file under any checkpoint root."""
    return [{"wildcard": f"*/checkpoints/global_step_*/{spec.last_file}"} for spec in LAYOUTS.values()]


def object_created_pattern(bucket: str) -> dict[str, Any]:
    """The rule's event pattern (the same as template.yaml's): only last files reach the queue."""
    return {
        "source": ["aws.s3"],
        "detail-type": ["Object Created"],
        "detail": {"bucket": {"name": [bucket]}, "object": {"key": last_file_patterns()}},
    }


@dataclass
class IntakeStack:
    """Names and ARNs of the created resources."""

    bucket: str
    queue_url: str
    dlq_url: str
    table: str
    state_machine_arn: str
    region: str

    def settings(self, **overrides: Any) -> RouterSettings:
        base = RouterSettings(
            state_machine_arn=self.state_machine_arn,
            idempotency_table=self.table,
            dead_letter_queue_url=self.dlq_url,
        )
        return RouterSettings(**{**base.__dict__, **overrides})


def create_idempotency_table(dynamodb: Any, name: str) -> None:
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def create_bucket(s3: Any, name: str, region: str, *, eventbridge: bool) -> None:
    kwargs: dict[str, Any] = {"Bucket": name}
    if region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
    s3.create_bucket(**kwargs)
    if eventbridge:
        s3.put_bucket_notification_configuration(
            Bucket=name, NotificationConfiguration={"EventBridgeConfiguration": {}}
        )


def create_intake_stack(
    client: Callable[[str], Any],
    *,
    region: str,
    bucket: str = "rlinf-checkpoints",
    eventbridge: bool = True,
    max_receive_count: int = 1000,
    asl: dict[str, Any] | None = None,
    name: str = "rlinf-bench-intake",
) -> IntakeStack:
    """Create the intake resources; ``eventbridge=False`` leaves event delivery to the caller (replays)."""
    sqs = client("sqs")
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)})
    queue_url = sqs.create_queue(
        QueueName=f"{name}-queue", Attributes={"RedrivePolicy": redrive, "VisibilityTimeout": "120"}
    )["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    create_bucket(client("s3"), bucket, region, eventbridge=eventbridge)
    if eventbridge:
        events = client("events")
        events.put_rule(Name=f"{name}-object-created", EventPattern=json.dumps(object_created_pattern(bucket)))
        events.put_targets(Rule=f"{name}-object-created", Targets=[{"Id": "intake-queue", "Arn": queue_arn}])
    table = f"{name}-idempotency"
    create_idempotency_table(client("dynamodb"), table)
    sm = client("stepfunctions").create_state_machine(
        name=f"{name}-evaluation", definition=json.dumps(asl or PASS_ASL), roleArn=FAKE_ROLE_ARN
    )
    return IntakeStack(bucket, queue_url, dlq_url, table, sm["stateMachineArn"], region)


def read_dead_letters(sqs: Any, dlq_url: str) -> list[dict[str, Any]]:
    """Every message in the DLQ as {"body", "reason", "letter_id", "message_id"}.

    ``reason`` and ``letter_id`` are None for a message SQS's redrive moved (the router did not send it);
    ``letter_id`` names the intake message and record a router letter is for (``<message id>#record-N``).
    """
    out: list[dict[str, Any]] = []
    while True:
        resp = sqs.receive_message(
            QueueUrl=dlq_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], WaitTimeSeconds=0
        )
        messages = resp.get("Messages", [])
        if not messages:
            return out
        for m in messages:
            attributes = m.get("MessageAttributes", {})
            reason = attributes.get("reason", {}).get("StringValue")
            letter_id = attributes.get("letter_id", {}).get("StringValue")
            out.append({"body": m["Body"], "reason": reason, "letter_id": letter_id, "message_id": m["MessageId"]})
            sqs.delete_message(QueueUrl=dlq_url, ReceiptHandle=m["ReceiptHandle"])
