"""Every setting has a type, a range and a unit, refused at load with the setting named: the intake config file,
the workflow Lambdas' environment, and the fields of a hand-written request, before any Job starts."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_plan import plan
from rlinf_bench.contracts import EvalRequest, RunResult
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.limits import MESSAGE_CHARS, NAME_CHARS
from rlinf_bench.contracts.workflow import PlanInput
from rlinf_bench.errors import ConfigError, InvalidRequestError
from rlinf_bench.intake.config import parse_config_text
from tests.unit.stats.runfactory import make_run

REF = CheckpointRef(uri="s3://b/runs/e/checkpoints/global_step_9", experiment="e", global_step=9)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("quiet_period_s: .inf", "quiet_period_s"),
        ("quiet_period_s: .nan", "quiet_period_s"),
        ("quiet_period_s: -1", "quiet_period_s"),
        ("quiet_period_s: 1e9", "quiet_period_s"),
        ("max_age_s: .inf", "max_age_s"),
        ("max_age_s: 0", "max_age_s"),
        ("max_age_s: -60", "max_age_s"),
        ('{"max_age_s": NaN}', "max_age_s"),
        ("seeds: [0, 1, 4294967296]", "seeds.2"),
        ("seeds: [-1, 1, 2]", "seeds.0"),
        ("suites: []", "suites"),
        ("kubernetes: {eval_deadline_s: 100000000}", "kubernetes.eval_deadline_s"),
        ("workflow: {heartbeat_s: 1000000}", "workflow.heartbeat_s"),
        ("workflow: {queue_s: 100000000}", "workflow.queue_s"),
        ("kueue: {queue: rlinf-eval, queue_limit_min: 100000000}", "kueue.queue_limit_min"),
        ("backlog: {max_running: 1000000}", "backlog.max_running"),
        ("backlog: {when_free: 'every:²'}", "backlog.when_free"),
        ("trials_per_task: 1000000", "trials_per_task"),
        ("workers: 100000", "workers"),
        ("policy: " + "p" * 5000, "policy"),
        ("suites: [" + "x" * 5000 + "]", "suites.0.name"),
        ("shards: 100000", "shards"),
    ],
)
def test_a_setting_out_of_range_in_the_intake_config_is_refused_at_load_naming_it(text: str, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config_text(text, source="ssm:/rlinf-bench/intake")
    message = str(info.value)
    assert "ssm:/rlinf-bench/intake" in message and field in message
    assert len(message) < 2000  # the value is not echoed whole


def test_every_2_superscript_is_refused_with_our_message_naming_the_forms() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config_text("backlog: {max_running: 1, when_free: 'every:²'}", source="intake.yaml")
    assert "every:²" in str(info.value) and "all, latest or every:K" in str(info.value)
    assert "invalid literal for int()" not in str(info.value)


def test_an_intake_config_whose_requests_would_not_fit_step_functions_is_refused_at_load() -> None:
    probes = [{"name": "storage", "args": ["--path", "/fsx/" + "d" * 8000]}] * 30
    with pytest.raises(ConfigError, match=r"bytes; at most 204800 leave room"):
        parse_config_text(json.dumps({"probes": probes}), source="intake.json")


@pytest.mark.parametrize(
    ("variable", "value"),
    [("KUEUE_QUEUE_LIMIT_MIN", "inf"), ("KUEUE_QUEUE_LIMIT_MIN", "0"), ("KUEUE_QUEUE_LIMIT_MIN", "99999999")],
)
def test_a_workflow_lambda_override_out_of_range_is_refused_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"{variable}={value!r}"):
        PipelineSettings.from_env({variable: value})


def test_a_too_long_workflow_setting_names_its_variable() -> None:
    with pytest.raises(ConfigError, match=r"- EVAL_IMAGE: String should have at most"):
        PipelineSettings.from_env({"EVAL_IMAGE": "x" * 5000})


SETTINGS = PipelineSettings(results_prefix="s3://b/results", eval_image="e@sha256:" + "a" * 64, probe_image="p")


def test_a_request_with_no_suite_fails_plan_naming_the_field() -> None:
    request = EvalRequest(checkpoint=REF, suites=[])
    with pytest.raises(InvalidRequestError, match=r"suites is empty"):
        plan(PlanInput(request=request, execution="x"), SETTINGS)


def test_a_robotwin_seed_beyond_the_simulators_range_fails_plan_naming_the_largest_seed() -> None:
    request = EvalRequest(
        checkpoint=REF, suites=["robotwin/beat_block_hammer"], runs=1, seeds=[50_000], robotwin_image="r"
    )
    with pytest.raises(InvalidRequestError, match=r"seeds: \[50000\] too large for RoboTwin.*0 to 42947"):
        plan(PlanInput(request=request, execution="x"), SETTINGS)


def test_a_libero_seed_beyond_numpys_range_is_refused_where_the_request_is_read() -> None:
    with pytest.raises(ValidationError, match=r"seeds\.0"):
        EvalRequest(checkpoint=REF, runs=1, seeds=[2**32])
    assert EvalRequest(checkpoint=REF, runs=1, seeds=[2**32 - 1]).seeds == [2**32 - 1]


def test_a_10_mb_task_name_in_a_result_file_is_refused_where_it_is_read_naming_the_field() -> None:
    run = json.loads(make_run({0: [1, 0]}).to_json())
    run["tasks"][0]["task_name"] = "t" * 10_000_000
    with pytest.raises(Exception) as info:
        RunResult.from_json(json.dumps(run), source="results/r0.json")
    message = str(info.value)
    assert "results/r0.json" in message and "tasks.0.task_name" in message and f"at most {NAME_CHARS}" in message
    assert len(message) < 5000


def test_a_huge_error_in_a_result_file_is_cut_with_its_length_not_refused() -> None:
    run = json.loads(make_run({0: [1, 0]}).to_json())
    run["error"] = "e" * 10_000_000
    read = RunResult.from_json(json.dumps(run), source="results/r0.json")
    assert read.error is not None and len(read.error) == MESSAGE_CHARS
    assert read.error.endswith("[cut: 10000000 characters]")
