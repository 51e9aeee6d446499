"""No module of the core calls a cloud or GPU API: the core speaks to the world through the interfaces of
rlinf_bench.ports, and whoever runs it passes the implementations in.

import-linter already keeps boto3, botocore and pynvml out of the core's imports. That is not enough: a
client passed in as an argument (``s3.get_object(...)``) needs no import at all. So the core's source is
read for the calls themselves: a method of an AWS client (by name), a client being built, an NVML call, or
a client method named by a string (``get_paginator("list_objects_v2")``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CORE = REPO / "rlinf_bench"

#: Methods of the AWS clients: S3, SQS, SSM, Secrets Manager, Step Functions, DynamoDB, SNS/EventBridge.
CLIENT_METHODS = frozenset(
    {
        "list_objects",
        "list_objects_v2",
        "get_object",
        "put_object",
        "head_object",
        "delete_object",
        "copy_object",
        "download_file",
        "upload_file",
        "generate_presigned_url",
        "get_paginator",
        "send_message",
        "send_message_batch",
        "receive_message",
        "delete_message",
        "get_parameter",
        "get_parameters",
        "get_parameters_by_path",
        "put_parameter",
        "get_secret_value",
        "start_execution",
        "stop_execution",
        "send_task_success",
        "send_task_failure",
        "send_task_heartbeat",
        "get_item",
        "put_item",
        "update_item",
        "delete_item",
        "transact_write_items",
        "put_events",
        "publish_batch",
    }
)
#: Prefixes of client methods: every ``describe_*`` of boto3 (clusters, executions, stacks...) and NVML.
CLIENT_PREFIXES = ("describe_", "nvml")
#: Building a client or a session: ``boto3.client(...)``, ``session.client(...)``, ``boto3.resource(...)``.
CLIENT_BUILDERS = frozenset({"client", "resource", "Session"})


def _is_client_method(name: str) -> bool:
    return name in CLIENT_METHODS or name.startswith(CLIENT_PREFIXES)


def cloud_calls(source: str, filename: str = "<source>") -> list[str]:
    """Every call in ``source`` that reaches a cloud or GPU API, as ``line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and (_is_client_method(func.attr) or func.attr in CLIENT_BUILDERS):
            found.append(f"{node.lineno}: .{func.attr}(...)")
        elif isinstance(func, ast.Name) and func.id.startswith("nvml"):  # from pynvml import nvmlInit
            found.append(f"{node.lineno}: {func.id}(...)")
        for arg in node.args:  # getattr(client, "get_object"), paginator names
            text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
            if text.isidentifier() and _is_client_method(text):
                found.append(f"{node.lineno}: {arg.value!r} named in a call")
    return found


def test_no_core_module_calls_a_cloud_or_gpu_api() -> None:
    offenders = {
        str(path.relative_to(REPO)): calls
        for path in sorted(CORE.rglob("*.py"))
        if (calls := cloud_calls(path.read_text(), str(path)))
    }
    assert offenders == {}, "the core calls these APIs: pass an implementation of rlinf_bench.ports in instead"


@pytest.mark.parametrize(
    "source",
    [
        "def read(s3, b, k):\n    return s3.get_object(Bucket=b, Key=k)['Body'].read()",
        "def keys(s3):\n    return s3.get_paginator('list_objects_v2').paginate(Bucket='b')",
        "def letter(sqs, url):\n    sqs.send_message(QueueUrl=url, MessageBody='x')",
        "def config(ssm):\n    return ssm.get_parameter(Name='/x', WithDecryption=True)",
        "def start(sfn, arn):\n    sfn.start_execution(stateMachineArn=arn, input='{}')",
        "def cluster(eks):\n    return eks.describe_cluster(name='c')",
        "def build():\n    import boto3\n    return boto3.client('s3')",
        "def build(session):\n    return session.client('eks', region_name='eu-west-1')",
        "def gpus():\n    import pynvml\n    pynvml.nvmlInit()",
        "from pynvml import nvmlDeviceGetCount\nn = nvmlDeviceGetCount()",
        "def read(s3):\n    return getattr(s3, 'head_object')(Bucket='b', Key='k')",
    ],
)
def test_given_a_call_of_a_cloud_or_gpu_api_then_the_scan_finds_it(source: str) -> None:
    assert cloud_calls(source) != []


def test_given_calls_through_the_ports_and_look_alike_names_then_the_scan_finds_nothing() -> None:
    source = (
        "def run(storage, objects, policy, exc):\n"
        "    storage.read_bytes('s3://b/k')\n"
        "    list(objects.list_prefix('b', 'p/'))\n"
        "    policy.describe()\n"
        "    describe_validation_error('EvalRun', 'x', exc)\n"
        "    log.info('nvml is not the core business')\n"
    )
    assert cloud_calls(source) == []
