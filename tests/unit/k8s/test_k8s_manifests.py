"""The Jobs built from an EvalRequest: valid for the API server, restricted, deterministic, safe argv."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes_validate
import kubernetes_validate.utils
import pytest
import yaml

from rlinf_bench.contracts import CheckpointRef, EvalRequest, EvalRun, JobSettings, ProbeSpec, Resources
from rlinf_bench.errors import JobSpecError, UnknownSuiteError
from rlinf_k8s.container import local_command
from rlinf_k8s.dns_names import validate_label_value
from rlinf_k8s.jobs import REQUEST_ID_ANNOTATION, JobBundle, jobs_for_request
from rlinf_k8s.pod_security import check_restricted, pod_spec_of
from tests.unit.k8s.conftest import K8S_SCHEMA_VERSION, make_request

REPO = Path(__file__).resolve().parents[3]


def _by_name(bundles: list[JobBundle], fragment: str) -> JobBundle:
    return next(b for b in bundles if fragment in b.name)


def _container(bundle: JobBundle) -> dict:  # type: ignore[type-arg]
    job = next(m for m in bundle.manifests() if m["kind"] == "Job")
    return job["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("version", [K8S_SCHEMA_VERSION, kubernetes_validate.utils.latest_version()])
def test_given_a_full_request_when_rendered_then_every_manifest_passes_the_official_openapi_schema(
    request_obj: EvalRequest, version: str
) -> None:
    bundles = jobs_for_request(request_obj)

    manifests = [m for b in bundles for m in b.manifests()]

    assert len(bundles) == 2 * 3 + 5
    for m in manifests:
        kubernetes_validate.validate(m, version, strict=True)


def test_given_every_job_then_its_pods_meet_the_restricted_pod_security_profile(request_obj: EvalRequest) -> None:
    for bundle in jobs_for_request(request_obj):
        job = next(m for m in bundle.manifests() if m["kind"] == "Job")
        assert check_restricted(pod_spec_of(job)) == [], bundle.name


def test_given_the_same_request_twice_then_job_names_are_identical_and_distinct_per_run(
    request_obj: EvalRequest,
) -> None:
    first = [b.name for b in jobs_for_request(request_obj)]
    second = [b.name for b in jobs_for_request(make_request())]

    assert first == second
    assert len(set(first)) == len(first)
    assert all(len(n) <= 63 for n in first)


def test_given_a_very_long_experiment_name_then_names_stay_within_63_chars_and_labels_stay_valid() -> None:
    long_exp = "Libero10 RL sweep/" + "x" * 120
    req = make_request(checkpoint=CheckpointRef(uri="/fsx/ck/a", experiment=long_exp, global_step=7))
    other = make_request(checkpoint=CheckpointRef(uri="/fsx/ck/b", experiment=long_exp, global_step=7))

    bundles = jobs_for_request(req)

    nccl = _by_name(bundles, "nccl")
    assert len(nccl.name) + len("-1") <= 63  # the Indexed Job's pod hostname <job>-<index> is a DNS label too
    for b in bundles:
        assert len(b.name) <= 63
        labels = b.job.metadata.labels
        for key, value in labels.items():
            validate_label_value(value, field=key)
        assert b.job.metadata.annotations[REQUEST_ID_ANNOTATION] == req.request_id
    assert {b.name for b in bundles}.isdisjoint({b.name for b in jobs_for_request(other)})


def test_given_an_eval_job_then_it_carries_the_brief_scheduling_resources_volumes_env_and_lifecycle(
    request_obj: EvalRequest,
) -> None:
    bundle = jobs_for_request(request_obj)[0]
    job = bundle.manifests()[0]
    pod = job["spec"]["template"]["spec"]
    c = pod["containers"][0]

    assert job["spec"]["backoffLimit"] == 1
    assert job["spec"]["activeDeadlineSeconds"] == 4 * 3600
    assert job["spec"]["ttlSecondsAfterFinished"] == 7 * 24 * 3600
    assert pod["restartPolicy"] == "Never"
    assert pod["nodeSelector"] == {"role": "gpu-training"}
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["serviceAccountName"] == "rlinf-bench-runner"
    assert (
        c["resources"]["requests"] == c["resources"]["limits"] == {"cpu": "16", "memory": "96Gi", "nvidia.com/gpu": "1"}
    )
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["/fsx"]["readOnly"] is True
    assert volumes["checkpoints"]["persistentVolumeClaim"] == {"claimName": "fsx-claim", "readOnly": True}
    assert volumes["dshm"]["emptyDir"]["medium"] == "Memory"
    assert "/results" in mounts and mounts["/results"].get("readOnly") is not True
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["MUJOCO_GL"] == "egl" and env["PYOPENGL_PLATFORM"] == "egl"
    assert "graphics" in env["NVIDIA_DRIVER_CAPABILITIES"]
    labels = job["metadata"]["labels"]
    assert labels["rlinf-bench/experiment"] == "libero10-rl"
    assert labels["rlinf-bench/global-step"] == "100"
    assert labels["rlinf-bench/suite"] == "libero_10"
    assert labels["rlinf-bench/run"] == "0"
    assert job["spec"]["template"]["metadata"]["labels"] == labels
    rules = job["spec"]["podFailurePolicy"]["rules"]
    assert rules[0] == {"action": "FailJob", "onExitCodes": {"containerName": "eval", "operator": "In", "values": [2]}}
    assert rules[1]["action"] == "Ignore" and rules[1]["onPodConditions"][0]["type"] == "DisruptionTarget"


def test_given_an_eval_job_then_its_argv_carries_the_eval_run_json_as_one_element(request_obj: EvalRequest) -> None:
    bundle = jobs_for_request(request_obj)[0]
    argv = _container(bundle)["command"]

    assert argv[:4] == ["python", "-m", "eval_runner", "--request"]
    run = EvalRun.from_json(argv[4])
    assert run == request_obj.expand()[0]
    assert argv[5:] == ["--out", run.output_uri, "--resume"]


def test_given_user_values_with_shell_and_var_syntax_then_they_reach_the_process_unchanged() -> None:
    nasty = "/fsx/ck/$(HOME)/`rm -rf /`; echo $PATH 'q' \"dq\" $$"
    req = make_request(
        checkpoint=CheckpointRef(uri=nasty, experiment="e", global_step=1),
        probes=[ProbeSpec(name="storage", args=["--path", "$(SECRET)/x; ls"])],
        output_prefix="",
    )
    bundles = jobs_for_request(req)

    eval_cmd = local_command(bundles[0].job, pod_name="p")
    probe_cmd = local_command(_by_name(bundles, "storage").job, pod_name="p", extra_env={"SECRET": "leaked"})

    assert EvalRun.from_json(eval_cmd.argv[4]).checkpoint.uri == nasty
    assert probe_cmd.argv[-3:] == ["--json", "--path", "$(SECRET)/x; ls"]
    assert "--out" not in eval_cmd.argv  # no output prefix: the runner decides


def test_given_probes_then_writing_probes_get_fsx_read_write_and_others_read_only(request_obj: EvalRequest) -> None:
    bundles = jobs_for_request(request_obj)

    def fsx_read_only(fragment: str) -> bool:
        mounts = _container(_by_name(bundles, fragment))["volumeMounts"]
        return next(m for m in mounts if m["mountPath"] == "/fsx").get("readOnly", False)

    assert fsx_read_only("-gpu") is True
    assert fsx_read_only("-storage") is False
    assert fsx_read_only("-checkpoint-io") is False
    assert _container(_by_name(bundles, "-gpu"))["command"] == [
        "python",
        "-m",
        "infra_probes",
        "gpu",
        "--json",
        "--out",
        f"s3://results-bucket/rlinf-bench/{request_obj.request_id}/probes/gpu.json",
    ]


def test_given_a_two_node_nccl_probe_then_an_indexed_job_and_headless_service_wire_torchrun(
    request_obj: EvalRequest,
) -> None:
    bundle = _by_name(jobs_for_request(request_obj), "nccl")
    svc, job = bundle.manifests()
    argv = job["spec"]["template"]["spec"]["containers"][0]["command"]

    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 2
    assert job["spec"]["template"]["spec"]["subdomain"] == svc["metadata"]["name"] == bundle.name
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["selector"] == {"batch.kubernetes.io/job-name": bundle.name}
    assert argv[:6] == [
        "torchrun",
        "--nnodes=2",
        "--nproc-per-node=8",
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        "--rdzv-backend=static",
        f"--rdzv-endpoint={bundle.name}-0.{bundle.name}:29500",
    ]
    assert "--expected-world-size=16" in argv
    resources = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == "8"


@pytest.mark.parametrize(
    ("overrides", "error", "fragment"),
    [
        ({"image": ""}, JobSpecError, "no `image`"),
        ({"probe_image": " "}, JobSpecError, "no `probe_image`"),
        ({"suites": [{"name": "libero_100"}]}, UnknownSuiteError, "libero_100"),
        ({"suites": [{"name": "libero_spatial", "tasks": [12]}]}, JobSpecError, "suites[0].tasks"),
        ({"probes": [{"name": "gpu", "nodes": 2}]}, JobSpecError, "only 'nccl' takes nodes > 1"),
        ({"probes": [{"name": "gpu"}, {"name": "gpu"}]}, JobSpecError, "listed twice"),
        ({"kubernetes": JobSettings(namespace="Eval_NS")}, JobSpecError, "kubernetes.namespace='Eval_NS'"),
        ({"kubernetes": JobSettings(node_selector={"role": "gpu training"})}, JobSpecError, "node_selector"),
        ({"kubernetes": JobSettings(service_account="runner_sa")}, JobSpecError, "service_account"),
        ({"kubernetes": JobSettings(checkpoint_pvc="FSx")}, JobSpecError, "checkpoint_pvc"),
        ({"kubernetes": JobSettings(env={"1BAD": "x"})}, JobSpecError, "environment variable name '1BAD'"),
        ({"kubernetes": JobSettings(shm_size="lots")}, JobSpecError, "shm_size"),
        ({"resources": Resources(memory="64 GB")}, JobSpecError, "resources.memory='64 GB'"),
        ({"resources": Resources(cpu="")}, JobSpecError, "resources.cpu=''"),
        ({"resources": Resources(gpu_resource_key="nvidia gpu")}, JobSpecError, "gpu_resource_key"),
        ({"image": "repo/img:1 --privileged"}, JobSpecError, "whitespace"),
    ],
)
def test_given_bad_input_when_building_then_a_clear_error_before_any_api_call(
    overrides: dict, error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error) as info:
        jobs_for_request(make_request(**overrides))
    assert fragment in str(info.value)


def test_given_the_example_request_then_it_renders_valid_restricted_jobs() -> None:
    data = yaml.safe_load((REPO / "examples" / "eval-request.yaml").read_text())
    req = EvalRequest.from_dict(data, source="examples/eval-request.yaml")

    bundles = jobs_for_request(req)

    assert bundles
    for b in bundles:
        for m in b.manifests():
            kubernetes_validate.validate(m, K8S_SCHEMA_VERSION, strict=True)
    json.dumps([b.manifests() for b in bundles])  # plain data only


def test_given_the_deploy_manifests_then_they_are_schema_valid_and_least_privilege() -> None:
    docs = [
        d
        for path in sorted((REPO / "deploy" / "k8s").glob("*.yaml"))
        if path.name != "kustomization.yaml"
        for d in yaml.safe_load_all(path.read_text())
        if d
    ]
    for d in docs:
        kubernetes_validate.validate(d, K8S_SCHEMA_VERSION, strict=True)
    roles = [d for d in docs if d["kind"] == "Role"]
    assert [d["kind"] for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")] == []
    granted = {
        (res, verb) for role in roles for rule in role["rules"] for res in rule["resources"] for verb in rule["verbs"]
    }
    assert granted == {
        ("jobs", "create"),
        ("jobs", "get"),
        ("jobs", "list"),
        ("jobs", "delete"),
        ("jobs/status", "get"),
        ("pods", "get"),
        ("pods", "list"),
        ("pods/log", "get"),
        ("services", "create"),
        ("workloads", "get"),  # the queue sentinel tells a preempted Job from one never admitted (read-only)
        ("workloads", "list"),
    }
    assert {r["metadata"]["namespace"] for r in roles} == {"rlinf-eval"}
