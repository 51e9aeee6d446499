"""IAM least privilege, checked on the CloudFormation that samtranslator makes of template.yaml."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]


# Actions that have no resource-level permissions: "*" is the only Resource they accept.
NO_RESOURCE_LEVEL = frozenset(
    {
        "logs:CreateLogDelivery",
        "logs:GetLogDelivery",
        "logs:UpdateLogDelivery",
        "logs:DeleteLogDelivery",
        "logs:ListLogDeliveries",
        "logs:PutResourcePolicy",
        "logs:DescribeResourcePolicies",
        "logs:DescribeLogGroups",
        "states:SendTaskSuccess",
        "states:SendTaskFailure",
        "states:SendTaskHeartbeat",
    }
)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _expand(statement: Any) -> Iterator[dict[str, Any]]:
    """A statement, or both branches of an Fn::If around one (AWS::NoValue dropped)."""
    if isinstance(statement, dict) and "Fn::If" in statement:
        for branch in statement["Fn::If"][1:]:
            yield from _expand(branch)
    elif isinstance(statement, dict) and statement != {"Ref": "AWS::NoValue"}:
        yield statement


def role_statements(resources: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(role or policy name, statement) for every identity-policy statement in the template."""
    for name, res in resources.items():
        props = res.get("Properties", {})
        if res["Type"] == "AWS::IAM::Role":
            docs = [p["PolicyDocument"] for p in props.get("Policies", [])]
        elif res["Type"] in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            docs = [props["PolicyDocument"]]
        else:
            continue
        for doc in docs:
            for raw in _as_list(doc["Statement"]):
                for statement in _expand(raw):
                    yield name, statement


def iam_problems(cfn: dict[str, Any]) -> list[str]:
    """Every grant broader than least privilege: managed policies, Action wildcards, needless Resource "*"."""
    resources = cfn["Resources"]
    problems = [
        f"{name}: managed policies {res['Properties']['ManagedPolicyArns']}; grant inline, per resource"
        for name, res in resources.items()
        if res["Type"] == "AWS::IAM::Role" and res["Properties"].get("ManagedPolicyArns")
    ]
    for name, st in role_statements(resources):
        if st.get("Effect") != "Allow":
            continue
        if "NotAction" in st or "NotResource" in st:
            problems.append(f"{name}: NotAction/NotResource grants everything else")
        actions = [str(a) for a in _as_list(st.get("Action", []))]
        problems += [f"{name}: Action wildcard {a!r}" for a in actions if "*" in a]
        if "*" in _as_list(st.get("Resource")):
            scoped = sorted(set(actions) - NO_RESOURCE_LEVEL)
            if scoped:
                problems.append(f'{name}: Resource "*" for {scoped}, which take resource-level permissions')
    return problems


def actions_of(cfn: dict[str, Any], role: str) -> set[str]:
    return {
        str(a)
        for name, st in role_statements(cfn["Resources"])
        if name == role and st.get("Effect") == "Allow"
        for a in _as_list(st["Action"])
    }


def test_given_the_transformed_template_then_no_grant_is_broader_than_needed(transformed: dict[str, Any]) -> None:
    assert iam_problems(transformed) == []


def test_given_a_broad_grant_then_the_scan_names_it() -> None:
    broad = {
        "Resources": {
            "R": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "ManagedPolicyArns": ["arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
                    "Policies": [
                        {
                            "PolicyDocument": {
                                "Statement": [
                                    # what DynamoDBCrudPolicy grants: Batch* and Scan, which idempotency never uses
                                    {"Effect": "Allow", "Action": ["dynamodb:Batch*"], "Resource": "arn:t"},
                                    {
                                        "Fn::If": [
                                            "C",
                                            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"},
                                            {"Ref": "AWS::NoValue"},
                                        ]
                                    },
                                    {"Effect": "Allow", "Action": "states:SendTaskSuccess", "Resource": "*"},
                                ]
                            }
                        }
                    ],
                },
            }
        }
    }
    problems = iam_problems(broad)
    assert len(problems) == 3
    assert "managed policies" in problems[0]
    assert "dynamodb:Batch*" in problems[1]
    assert "s3:GetObject" in problems[2]


def test_given_the_template_then_every_resource_star_says_why_in_a_comment() -> None:
    lines = (REPO / "template.yaml").read_text().splitlines()
    assert (
        sum('Resource: "*"' in line for line in lines) == 3
    )  # log delivery, task-token callbacks (Jobs, queue sentinel)
    for i, line in enumerate(lines):
        if re.match(r'^\s*Resource: "\*"', line):
            assert "# no resource-level permissions" in line, f'template.yaml:{i + 1}: Resource "*" without the reason'


def test_given_the_jobs_role_then_it_may_only_call_back_write_results_and_read_checkpoints(
    transformed: dict[str, Any],
) -> None:
    resources = transformed["Resources"]
    assert actions_of(transformed, "JobsRole") == {
        "states:SendTaskSuccess",
        "states:SendTaskFailure",
        "states:SendTaskHeartbeat",
        "s3:PutObject",
        "s3:GetObject",
        "s3:ListBucket",
    }
    for _, st in role_statements({"JobsRole": resources["JobsRole"]}):
        if "s3:PutObject" in _as_list(st["Action"]) and st["Effect"] == "Allow":
            assert st["Resource"] == {"Fn::Sub": "${CheckpointBucket.Arn}/results/*"}
    trust = resources["JobsRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "pods.eks.amazonaws.com"}]
    association = resources["JobsPodIdentity"]["Properties"]
    assert association["RoleArn"] == {"Fn::GetAtt": ["JobsRole", "Arn"]}


def test_given_the_router_then_idempotency_gets_exactly_the_item_calls_it_makes(transformed: dict[str, Any]) -> None:
    dynamodb = {a for a in actions_of(transformed, "CheckpointRouterRole") if a.startswith("dynamodb:")}
    assert dynamodb == {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}


def test_given_the_slack_webhook_then_only_the_slack_notifier_can_read_it(transformed: dict[str, Any]) -> None:
    readers = {
        name
        for name, st in role_statements(transformed["Resources"])
        if "secretsmanager:GetSecretValue" in _as_list(st["Action"]) and "SlackWebhook" in str(st["Resource"])
    }
    assert readers == {"SlackNotifierRole"}


def test_given_each_function_then_it_runs_under_its_own_role(transformed: dict[str, Any]) -> None:
    functions = {n: r for n, r in transformed["Resources"].items() if r["Type"] == "AWS::Lambda::Function"}
    roles = [f["Properties"]["Role"] for f in functions.values()]
    assert len(functions) == 8  # the seven of the workflow and intake, and the queue sentinel
    assert len({str(r) for r in roles}) == len(roles)
