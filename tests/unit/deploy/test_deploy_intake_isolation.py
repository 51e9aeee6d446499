"""Nothing the Jobs write can start an evaluation, and an event EventBridge cannot deliver is kept."""

from __future__ import annotations

import fnmatch
from typing import Any

INTAKE_KEY_UNDER_RESULTS = "results/req/m1234abcd/checkpoints/global_step_5/actor/model/model.safetensors"


def _statements(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc["Statement"])


def _sub(resource: Any) -> str:
    # template.yaml as written: `!Sub "..."` reads as {"Sub": "..."} (samtranslator's output: "Fn::Sub").
    if isinstance(resource, dict):
        return str(resource.get("Sub") or resource["Fn::Sub"])
    return str(resource)


def _iam_matches(resource: str, key: str) -> bool:
    # IAM wildcards: '*' matches any run of characters, '/' included (as fnmatch's '*').
    return fnmatch.fnmatchcase(f"${{CheckpointBucket.Arn}}/{key}", resource)


def test_the_jobs_role_is_denied_writing_any_key_the_intake_rule_listens_to(template: dict[str, Any]) -> None:
    role = template["Resources"]["JobsRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    denies = [s for s in _statements(role) if s["Effect"] == "Deny" and "s3:PutObject" in str(s["Action"])]
    assert denies, "JobsRole needs a Deny on the intake's keys"
    assert any(_iam_matches(_sub(s["Resource"]), INTAKE_KEY_UNDER_RESULTS) for s in denies)
    # ... while its own result files stay writable.
    assert not any(_iam_matches(_sub(s["Resource"]), "results/req/m1234abcd/libero_spatial/run0.json") for s in denies)
    assert not any(
        _iam_matches(_sub(s["Resource"]), "results/req/m1/report/site/checkpoints/exp-step_5/libero/task_0.html")
        for s in denies
    )


def test_the_bucket_refuses_intake_keys_under_results_for_everyone(template: dict[str, Any]) -> None:
    policy = template["Resources"]["CheckpointBucketPolicy"]["Properties"]["PolicyDocument"]
    denies = [s for s in _statements(policy) if s["Effect"] == "Deny" and s["Action"] == "s3:PutObject"]
    assert [s["Principal"] for s in denies] == ["*"]
    assert _iam_matches(_sub(denies[0]["Resource"]), INTAKE_KEY_UNDER_RESULTS)
    assert not _iam_matches(_sub(denies[0]["Resource"]), "runs/exp/checkpoints/global_step_5/actor/optim.pt")


def test_the_intake_rules_target_has_a_dead_letter_queue_the_rule_may_send_to(template: dict[str, Any]) -> None:
    resources = template["Resources"]
    (target,) = resources["CheckpointCreatedRule"]["Properties"]["Targets"]
    dlq = target["DeadLetterConfig"]["Arn"]
    assert dlq == {"GetAtt": "CheckpointRuleDeadLetterQueue.Arn"}
    assert resources["CheckpointRuleDeadLetterQueue"]["Type"] == "AWS::SQS::Queue"
    assert target["RetryPolicy"]["MaximumEventAgeInSeconds"] <= 86400
    (policy,) = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::SQS::QueuePolicy"
        and r["Properties"]["Queues"] == [{"Ref": "CheckpointRuleDeadLetterQueue"}]
    ]
    (statement,) = policy["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"] == {"GetAtt": "CheckpointCreatedRule.Arn"}


def test_bucket_versioning_is_a_documented_parameter_and_old_result_versions_expire(template: dict[str, Any]) -> None:
    from pathlib import Path

    param = template["Parameters"]["BucketVersioning"]
    assert param["AllowedValues"] == ["Enabled", "Suspended"]
    bucket = template["Resources"]["CheckpointBucket"]["Properties"]
    assert bucket["VersioningConfiguration"] == {"Status": {"Ref": "BucketVersioning"}}
    (results_rule,) = [r for r in bucket["LifecycleConfiguration"]["Rules"] if r["Id"] == "expire-results"]
    assert results_rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": {"Ref": "ResultsRetentionDays"}}
    deploy_md = (Path(__file__).resolve().parents[3] / "docs" / "deploy.md").read_text()
    assert "`BucketVersioning`" in deploy_md
