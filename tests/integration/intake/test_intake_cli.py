"""The users' intake tools: trigger, backfill (S3 and local roots) and replay-events."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from rlinf_aws.s3_objects import S3Objects
from rlinf_aws.ssm_parameters import SsmParameters
from rlinf_bench.errors import ConfigError
from rlinf_cli.main import main
from rlinf_local.intake_resources import IntakeStack, create_intake_stack
from tests.integration.intake.conftest import REGION
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects

REPO = Path(__file__).resolve().parents[3]
RUN = "runs/openvla-libero10"


@pytest.fixture
def stack(aws: None) -> IntakeStack:
    return create_intake_stack(boto3.client, region=REGION, eventbridge=False)


def upload(stack: IntakeStack, step: int, *, complete: bool = True) -> str:
    objects = fsdp_objects(8, metadata_at="first")
    if not complete:
        objects = [o for o in objects if not o[0].endswith("full_weights.pt")]
    put_objects(
        boto3.client("s3"), stack.bucket, f"{RUN}/checkpoints/global_step_{step}", objects, multipart_weights=False
    )
    return f"s3://{stack.bucket}/{RUN}/checkpoints/global_step_{step}"


def write_local(root: Path, step: int, *, complete: bool = True) -> Path:
    ckpt = root / "openvla-libero10" / "checkpoints" / f"global_step_{step}"
    for relative, size in fsdp_objects(4, metadata_at="first", markers=False):
        if not complete and relative.endswith("full_weights.pt"):
            continue
        path = ckpt / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\0" * size)
    return ckpt


def run_json(capsys: pytest.CaptureFixture[str], *argv: str, status: int = 0) -> object:
    capsys.readouterr()
    assert main(list(argv)) == status
    return json.loads(capsys.readouterr().out)


def test_given_a_complete_s3_checkpoint_when_triggered_twice_then_one_execution_and_then_already_started(
    stack: IntakeStack, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = upload(stack, 100)
    args = ("trigger", uri, "--state-machine-arn", stack.state_machine_arn, "--quiet-period", "0", "--json")

    first = run_json(capsys, *args)
    second = run_json(capsys, *args)

    assert isinstance(first, dict) and isinstance(second, dict)
    assert (first["already_started"], second["already_started"]) == (False, True)
    assert first["checkpoint"]["global_step"] == 100
    executions = boto3.client("stepfunctions").list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    assert [e["name"] for e in executions] == [first["name"]]


def test_given_an_incomplete_checkpoint_when_triggered_then_exit_2_naming_what_is_missing(
    stack: IntakeStack, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = upload(stack, 100, complete=False)

    rc = main(["trigger", uri, "--state-machine-arn", stack.state_machine_arn, "--quiet-period", "0"])

    assert rc == 2
    assert "missing actor/model_state_dict/full_weights.pt" in capsys.readouterr().err


def test_given_a_path_that_is_not_a_checkpoint_root_when_triggered_then_the_error_says_where_to_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trigger", str(tmp_path), "--dry-run"]) == 2
    assert "global_step_<N>" in capsys.readouterr().err


def test_given_a_local_checkpoint_when_triggered_dry_run_then_the_request_is_printed_without_aws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = write_local(tmp_path, 25)

    request = run_json(capsys, "trigger", str(ckpt), "--dry-run", "--quiet-period", "0")

    assert isinstance(request, dict)
    assert request["checkpoint"] == {
        "schema_version": "1.0",
        "uri": str(ckpt),
        "experiment": "openvla-libero10",
        "global_step": 25,
        "layout": "fsdp_dcp",
    }


def test_given_evaluated_incomplete_and_new_checkpoints_when_backfilled_then_only_new_complete_ones_start(
    stack: IntakeStack, capsys: pytest.CaptureFixture[str]
) -> None:
    done, new, partial, other = (
        upload(stack, 25),
        upload(stack, 50),
        upload(stack, 75, complete=False),
        upload(stack, 100),
    )
    common = ("--state-machine-arn", stack.state_machine_arn, "--quiet-period", "0", "--json")
    run_json(capsys, "trigger", done, *common)

    rows = run_json(capsys, "backfill", f"s3://{stack.bucket}/{RUN}", "--steps", "25,50,75", *common)

    assert isinstance(rows, list)
    assert [(r["checkpoint"], r["status"]) for r in rows] == [
        (done, "already_evaluated"),
        (new, "started"),
        (partial, "incomplete"),
    ]
    assert other not in {r["checkpoint"] for r in rows}
    again = run_json(capsys, "backfill", f"s3://{stack.bucket}/{RUN}", "--all", *common)
    assert isinstance(again, list)
    assert [r["status"] for r in again] == ["already_evaluated", "already_evaluated", "incomplete", "started"]


def test_given_a_local_run_root_when_backfilled_then_local_checkpoints_are_started(
    stack: IntakeStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_local(tmp_path, 25)
    write_local(tmp_path, 50, complete=False)

    rows = run_json(
        capsys,
        "backfill",
        str(tmp_path),
        "--state-machine-arn",
        stack.state_machine_arn,
        "--quiet-period",
        "0",
        "--json",
    )

    assert isinstance(rows, list)
    assert [(r["global_step"], r["status"]) for r in rows] == [(25, "started"), (50, "incomplete")]
    [execution] = boto3.client("stepfunctions").list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
    assert json.loads(described["input"])["checkpoint"]["uri"] == str(
        tmp_path / "openvla-libero10/checkpoints/global_step_25"
    )


def test_given_the_recorded_export_when_replayed_then_executions_dead_letters_and_pending_are_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)

    # Its truncated line is dead: the exit status says so.
    report = run_json(capsys, "replay-events", str(REPO / "events" / "recorded-export.jsonl"), "--json", status=1)

    assert isinstance(report, dict)
    assert [e["checkpoint"]["global_step"] for e in report["executions"]] == [100, 125]
    for execution in report["executions"]:
        assert execution["name"].startswith(execution["input"]["request_id"] + "-m")
        assert execution["input"]["checkpoint"] == execution["checkpoint"]
    [dead] = report["dead_letters"]
    assert dead["event"] == '{"truncated": ' and "not valid JSON" in dead["reason"]
    assert (REPO / "events" / "recorded-export.jsonl").read_text().splitlines()[dead["line"] - 1] == dead["event"]
    [pending] = report["pending"]
    assert pending["checkpoint"]["global_step"] == 150 and "DCP shard ranks missing 5" in pending["reason"]


def test_given_events_replayed_three_times_in_classic_and_eventbridge_shape_then_one_execution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    root = "runs/a b/checkpoints/global_step_7"
    lines = []
    for relative, size in fsdp_objects(4, metadata_at="last"):
        key = f"{root}/{relative}"
        eb = {
            "source": "aws.s3",
            "detail-type": "Object Created",
            "detail": {"bucket": {"name": "bucket-1"}, "object": {"key": key, "size": size}},
        }
        classic = {
            "Records": [
                {
                    "eventName": "ObjectCreated:Put",
                    "s3": {"bucket": {"name": "bucket-1"}, "object": {"key": key.replace(" ", "+"), "size": size}},
                }
            ]
        }
        lines += [json.dumps(eb), json.dumps(classic), json.dumps(eb)]
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join(lines) + "\n")

    report = run_json(capsys, "replay-events", str(events), "--quiet-period", "120", "--json")

    assert isinstance(report, dict)
    assert [e["checkpoint"]["uri"] for e in report["executions"]] == [f"s3://bucket-1/{root}"]
    assert report["dead_letters"] == [] and report["pending"] == []


def test_given_the_config_in_ssm_or_s3_then_the_router_uses_it(stack: IntakeStack) -> None:
    from rlinf_bench.intake.config import load_intake_config

    boto3.client("ssm").put_parameter(Name="/rlinf/intake", Value="suites: [libero_90]\nruns: 1", Type="String")
    boto3.client("s3").put_object(Bucket=stack.bucket, Key="config/intake.json", Body=b'{"trials_per_task": 10}')

    from_ssm = load_intake_config("ssm:/rlinf/intake", parameters=SsmParameters(boto3.client("ssm")))
    from_s3 = load_intake_config(f"s3://{stack.bucket}/config/intake.json", objects=S3Objects(boto3.client("s3")))

    assert ([s.name for s in from_ssm.suites], from_ssm.runs) == (["libero_90"], 1)
    assert from_s3.trials_per_task == 10
    with pytest.raises(ConfigError, match="cannot read intake config SSM parameter '/missing'"):
        load_intake_config("ssm:/missing", parameters=SsmParameters(boto3.client("ssm")))
