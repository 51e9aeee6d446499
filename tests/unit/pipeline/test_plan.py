"""The plan state: bad requests fail before any Job starts, naming the field; good ones fan out."""

from __future__ import annotations

import pytest

from rlinf_aws.execution_names import execution_name, matrix_digest, parse_execution_name
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_plan import plan
from rlinf_bench.contracts import CheckpointRef, EvalRequest, ProbeSpec, SuiteSelection
from rlinf_bench.contracts.request import WorkflowSettings
from rlinf_bench.contracts.workflow import PlanInput
from rlinf_bench.errors import ConfigError, InvalidRequestError, UnknownBaselineError, UnknownSuiteError

CKPT = CheckpointRef(uri="s3://b/exp/checkpoints/global_step_7", experiment="exp", global_step=7)
SETTINGS = PipelineSettings(
    results_prefix="s3://b/results", eval_image="img@sha256:" + "a" * 64, probe_image="probe@sha256:" + "b" * 64
)


def request(**kw: object) -> EvalRequest:
    base: dict[str, object] = {
        "checkpoint": CKPT,
        "suites": [SuiteSelection(name="libero_spatial"), SuiteSelection(name="libero_goal", tasks=[0, 3])],
        "probes": [ProbeSpec(name="gpu"), ProbeSpec(name="nccl")],
        "baselines": ["libero/openvla-oft-rlinf", "previous", "best"],
    }
    base.update(kw)
    return EvalRequest(**base)  # type: ignore[arg-type]


def test_a_request_fans_out_into_suite_by_run_items_and_one_item_per_probe() -> None:
    req = request()
    out = plan(PlanInput(request=req, execution=execution_name(req)), SETTINGS)
    assert [(i.run.suite, i.run.run_index) for i in out.eval_items if i.run] == [
        ("libero_spatial", 0),
        ("libero_spatial", 1),
        ("libero_spatial", 2),
        ("libero_goal", 0),
        ("libero_goal", 1),
        ("libero_goal", 2),
    ]
    assert [i.probe.name for i in out.probe_items if i.probe] == ["gpu", "nccl"]
    first = out.eval_items[0]
    # The folder carries the matrix hash of the request as started, like the execution name.
    assert first.result_uri == f"s3://b/results/{req.request_id}/m{matrix_digest(req)}/libero_spatial/run0.json"
    assert out.result_root == f"s3://b/results/{req.request_id}/m{matrix_digest(req)}"
    assert first.run is not None and first.run.output_uri == first.result_uri
    assert first.heartbeat_s == 1800 and first.timeout_s == 4 * 3600 + 1800
    assert len({i.job_name for i in out.eval_items + out.probe_items}) == 8
    assert all(len(i.job_name) <= 63 for i in out.eval_items + out.probe_items)
    assert out.request.image == SETTINGS.eval_image  # filled from the deployment


@pytest.mark.parametrize(
    ("change", "error", "names"),
    [
        ({"suites": [SuiteSelection(name="libero_nowhere")]}, UnknownSuiteError, ["libero_nowhere", "libero_spatial"]),
        ({"suites": [SuiteSelection(name="libero_goal", tasks=[10])]}, ConfigError, ["suites[0].tasks"]),
        ({"baselines": ["libero/no-such-paper"]}, UnknownBaselineError, ["libero/no-such-paper"]),
        ({"probes": [ProbeSpec(name="gpu"), ProbeSpec(name="gpu")]}, ConfigError, ["probes", "gpu"]),
        ({"workflow": WorkflowSettings(heartbeat_s=86400)}, ConfigError, ["workflow.heartbeat_s"]),
        # A probe that would exit on its argument parser before its first heartbeat.
        (
            {"probes": [ProbeSpec(name="gpu"), ProbeSpec(name="storage")]},
            ConfigError,
            ["probes[1]", "storage", "--path"],
        ),
        (
            {"probes": [ProbeSpec(name="checkpoint_io", args=["--params", "4e6"])]},
            ConfigError,
            ["checkpoint_io", "--path"],
        ),
        ({"probes": [ProbeSpec(name="throughput")]}, ConfigError, ["throughput", "--run-id or --experiment"]),
    ],
)
def test_a_bad_request_fails_in_plan_naming_the_field(change: dict, error: type[Exception], names: list[str]) -> None:
    req = request(**change)
    with pytest.raises(error) as info:
        plan(PlanInput(request=req), SETTINGS)
    for name in names:
        assert name in str(info.value)


def test_no_image_anywhere_fails_with_the_setting_to_fix() -> None:
    with pytest.raises(ConfigError, match="EVAL_IMAGE"):
        plan(PlanInput(request=request()), PipelineSettings(results_prefix="s3://b/r", probe_image="p"))


def test_execution_names_carry_the_matrix_hash_and_attempt_and_fit_step_functions() -> None:
    req = request()
    name = execution_name(req)
    assert parse_execution_name(name) == (req.request_id, matrix_digest(req), 1)
    assert execution_name(req, 2).endswith("-a2")
    assert matrix_digest(req) == matrix_digest(req.model_copy(update={"attempt": 5}))
    assert matrix_digest(req) != matrix_digest(request(trials_per_task=10))
    long = CheckpointRef(
        uri="s3://b/" + "x" * 200 + "/global_step_123456789", experiment="e" * 80, global_step=123456789
    )
    assert len(execution_name(request(checkpoint=long), 999)) <= 80


@pytest.mark.parametrize(("suite", "limit"), [("libero_goal", 50), ("robotwin_short", 100)])
def test_too_many_trials_fail_at_plan_naming_trials_and_the_suites_limit(suite: str, limit: int) -> None:
    req = request(
        suites=[SuiteSelection(name=suite)], trials_per_task=limit + 1, robotwin_image="rt@sha256:" + "c" * 64
    )
    with pytest.raises(InvalidRequestError) as info:
        plan(PlanInput(request=req), SETTINGS)
    message = str(info.value)
    assert f"trials_per_task={limit + 1}" in message and f"at most {limit}" in message and suite in message


def test_a_plan_step_functions_could_not_carry_is_refused_at_plan_naming_what_to_change() -> None:
    runs = 40
    req = request(suites=[SuiteSelection(name="libero_90")], runs=runs, seeds=list(range(runs)), shards=90)
    with pytest.raises(InvalidRequestError) as info:
        plan(PlanInput(request=req), SETTINGS)
    message = str(info.value)
    assert f"{runs * 90} eval Jobs" in message and "262,144" in message and "fewer suites, runs or shards" in message


def test_the_map_items_share_one_copy_of_the_job_fields_and_carry_their_own_image() -> None:
    req = request(robotwin_image="rt@sha256:" + "c" * 64)
    out = plan(PlanInput(request=req, execution=execution_name(req)), SETTINGS)
    assert out.job.request_id == req.request_id and out.job.kubernetes == out.request.kubernetes
    assert {i.image for i in out.eval_items} == {SETTINGS.eval_image}
    assert {i.image for i in out.probe_items} == {SETTINGS.probe_image}


@pytest.mark.parametrize(
    "probe",
    [
        ProbeSpec(name="storage", args=["--path", "/fsx"]),
        ProbeSpec(name="storage", args=["--path=/fsx", "--size", "4G"]),
        ProbeSpec(name="throughput", args=["--experiment", "exp"]),
    ],
)
def test_a_probe_given_its_required_arguments_is_planned(probe: ProbeSpec) -> None:
    out = plan(PlanInput(request=request(probes=[probe])), SETTINGS)
    assert [i.probe.name for i in out.probe_items if i.probe] == [probe.name]


def test_the_built_in_default_request_passes_plan() -> None:
    out = plan(PlanInput(request=EvalRequest(checkpoint=CKPT)), SETTINGS)
    assert [i.probe.name for i in out.probe_items if i.probe] == ["gpu", "nccl"]


def test_given_robustness_then_the_plan_states_its_budget_and_refuses_it_on_a_suite_without_axes() -> None:
    req = request(robustness="quick", probes=[])
    out = plan(PlanInput(request=req, execution=execution_name(req)), SETTINGS)

    assert all(i.run is not None and i.run.robustness == req.robustness for i in out.eval_items)
    # libero_spatial's 10 tasks and libero_goal's 2, 50 trials, 3 runs: 1,800 standard; quick adds a tenth
    assert out.budget == "robustness quick: +180 perturbed episodes beside 1,800 standard ones (+10%)"
    assert plan(PlanInput(request=request(), execution="e"), SETTINGS).budget.startswith("robustness off")

    robotwin = request(robustness="camera:1", suites=[SuiteSelection(name="robotwin_short")], probes=[])
    with pytest.raises(InvalidRequestError, match=r"robotwin_short .* no robustness axes"):
        plan(PlanInput(request=robotwin, execution=execution_name(robotwin)), SETTINGS)
