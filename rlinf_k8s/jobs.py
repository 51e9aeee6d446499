"""The Jobs that execute an evaluation: one per (suite, run) or shard, and one per probe.

A Job is built from its run or probe, its image and the :class:`JobFields` every Job of the request
shares (what the Plan state hands each Map iteration), never from the whole request, and nothing here
checks the request again: the Plan state did, once (:mod:`rlinf_bench.request_checks`), and
:func:`jobs_for_request`, the route that skips the workflow, does it once before it builds anything.
What only Kubernetes cares about (resources and names it would reject) raises :class:`JobSpecError`
here; every error names the field and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubernetes import client as k8s

from rlinf_bench.contracts import EvalRequest, EvalRun, ProbeName, ProbeSpec
from rlinf_bench.contracts.layout import probe_result_uri
from rlinf_bench.contracts.probes import EVAL_IMAGE_PROBES
from rlinf_bench.contracts.workflow import JobFields
from rlinf_bench.errors import JobSpecError
from rlinf_bench.request_checks import image_for_probe, image_for_suite, validate_request
from rlinf_k8s.dns_names import eval_job_name, probe_job_name, sanitize_label_value
from rlinf_k8s.jobspec import RDZV_PORT, ContainerResources, JobSpec, escape_var_refs, to_manifest

__all__ = [
    "LABEL_PREFIX",
    "REQUEST_ID_ANNOTATION",
    "JobBundle",
    "eval_job",
    "jobs_for_request",
    "probe_job",
]

# Exit codes after which a retry cannot help, so the Job fails at once (podFailurePolicy FailJob):
# eval_runner exits 2 for bad input or a failed run (it retries transient errors itself);
# infra_probes exits 1 (verdict fail) and 3 (not_available) after writing its ProbeResult.
EVAL_FAIL_FAST_EXIT_CODES = (2,)
PROBE_FAIL_FAST_EXIT_CODES = (1, 3)
# Probes that measure the shared file system by writing to it: they get the FSx volume read-write.
WRITING_PROBES = frozenset({ProbeName.STORAGE, ProbeName.CHECKPOINT_IO})
LABEL_PREFIX = "rlinf-bench"
REQUEST_ID_ANNOTATION = f"{LABEL_PREFIX}/request-id"
CHECKPOINT_ANNOTATION = f"{LABEL_PREFIX}/checkpoint-uri"
# Environment every container gets. EGL renders headless on the GPU; NVIDIA's container runtime only
# mounts the EGL/GL driver libraries when "graphics" is among the driver capabilities.
BASE_ENV: dict[str, str] = {
    "MUJOCO_GL": "egl",
    "PYOPENGL_PLATFORM": "egl",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,graphics",
    "PYTHONUNBUFFERED": "1",
}


@dataclass(frozen=True)
class JobBundle:
    """Everything one logical Job needs on the cluster: the Job, plus a headless Service for Indexed Jobs."""

    kind: Literal["eval", "probe"]
    name: str
    namespace: str
    job: k8s.V1Job
    service: k8s.V1Service | None = None

    def manifests(self) -> list[dict[str, Any]]:
        """Plain dicts in apply order (Service first, so rank 0's DNS name exists when the pods start)."""
        objs: list[Any] = [self.service, self.job] if self.service is not None else [self.job]
        return [to_manifest(o) for o in objs]


def _labels(job: JobFields, kind: str, **extra: str) -> dict[str, str]:
    labels = {
        "app": "rlinf-bench",
        "app.kubernetes.io/name": "rlinf-bench",
        "app.kubernetes.io/component": kind,
        f"{LABEL_PREFIX}/experiment": sanitize_label_value(job.checkpoint.experiment),
        f"{LABEL_PREFIX}/global-step": str(job.checkpoint.global_step),
        f"{LABEL_PREFIX}/request": sanitize_label_value(job.request_id),
    }
    labels.update({f"{LABEL_PREFIX}/{k}": sanitize_label_value(v) for k, v in extra.items()})
    return labels


def _annotations(job: JobFields) -> dict[str, str]:
    # Annotations keep the exact values (label values may have been shortened or sanitized).
    return {REQUEST_ID_ANNOTATION: job.request_id, CHECKPOINT_ANNOTATION: job.checkpoint.uri}


def _env(job: JobFields, name: str, extra_env: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(BASE_ENV)
    env["RLINF_BENCH_REQUEST_ID"] = job.request_id
    env["RLINF_BENCH_JOB_NAME"] = name
    # Escaped like argv: Kubernetes expands $(VAR) in env values too, and these values are not ours.
    env.update({k: escape_var_refs(v) for k, v in job.kubernetes.env.items()})
    env.update({k: escape_var_refs(v) for k, v in (extra_env or {}).items()})
    return env


def eval_job(
    job: JobFields,
    run: EvalRun,
    *,
    image: str,
    extra_env: Mapping[str, str] | None = None,
    name: str | None = None,
) -> JobBundle:
    """The Job of one evaluation run: ``python -m eval_runner --request <EvalRun JSON> [--out URI --resume]``.

    ``name`` is the Job's name as the Plan state made it (its WorkItem's ``job_name``, after the execution,
    so a re-run attempt gets Jobs of its own); without a plan it is derived from the request id.
    """
    name = name or eval_job_name(run.request_id, run.suite, run.run_index)
    command = ["python", "-m", "eval_runner", "--request", escape_var_refs(run.to_json(indent=None))]
    if run.output_uri:
        # A pod that is retried (eviction, node loss) keeps the episodes its predecessor finished,
        # and a re-submitted Job whose result is already complete does no work again.
        command += ["--out", escape_var_refs(run.output_uri), "--resume"]
    res = job.resources
    spec = JobSpec(
        name=name,
        namespace=job.kubernetes.namespace,
        image=image,
        command=command,
        resources=ContainerResources(cpu=res.cpu, memory=res.memory, gpu=res.gpu, gpu_key=res.gpu_resource_key),
        settings=job.kubernetes,
        deadline_s=job.kubernetes.eval_deadline_s,
        labels=_labels(job, "eval", suite=run.suite, run=str(run.run_index)),
        annotations=_annotations(job),
        env=_env(job, name, extra_env),
        container_name="eval",
        fail_fast_exit_codes=EVAL_FAIL_FAST_EXIT_CODES,
        kueue=job.kueue,
    )
    return JobBundle(kind="eval", name=name, namespace=spec.namespace, job=spec.build())


def _probe_command(probe: ProbeSpec, name: str, out_uri: str) -> list[str]:
    tail = ["infra_probes", probe.name, "--json"]
    if out_uri:
        tail += ["--out", escape_var_refs(out_uri)]
    tail += [escape_var_refs(a) for a in probe.args]
    if probe.name == ProbeName.NCCL and probe.nodes > 1:
        # Fail (not measure a partial world) when a node never joins.
        world = probe.nodes * max(probe.gpus_per_node, 1)
        if not any(a.startswith("--expected-world-size") for a in probe.args):
            tail += [f"--expected-world-size={world}"]
        if not any(a.startswith("--nodes") for a in probe.args):
            tail += [f"--nodes={probe.nodes}"]
        # Static rendezvous: rank 0 (index 0 of the Indexed Job) hosts the store at a stable DNS name.
        # $(JOB_COMPLETION_INDEX) is expanded by Kubernetes from the env var the Job controller sets.
        return [
            "torchrun",
            f"--nnodes={probe.nodes}",
            f"--nproc-per-node={max(probe.gpus_per_node, 1)}",
            "--node-rank=$(JOB_COMPLETION_INDEX)",
            "--rdzv-backend=static",
            f"--rdzv-endpoint={name}-0.{name}:{RDZV_PORT}",
            "-m",
            *tail,
        ]
    if probe.name == ProbeName.NCCL and probe.gpus_per_node > 1:
        return ["torchrun", "--standalone", f"--nproc-per-node={probe.gpus_per_node}", "-m", *tail]
    return ["python", "-m", *tail]


def probe_job(
    job: JobFields,
    probe: ProbeSpec,
    *,
    image: str,
    out_uri: str,
    extra_env: Mapping[str, str] | None = None,
    name: str | None = None,
) -> JobBundle:
    """The Job of one probe; the multi-node NCCL probe is an Indexed Job plus a headless Service.

    ``name`` as for :func:`eval_job`; ``out_uri`` is where the ProbeResult goes ('': the Job's log only).
    """
    name = name or probe_job_name(job.request_id, probe.name, probe.nodes)
    res = job.resources
    # The probes that play the simulator run in the eval image; they simulate on the CPU and need no GPU.
    in_eval_image = probe.name in EVAL_IMAGE_PROBES
    spec = JobSpec(
        name=name,
        namespace=job.kubernetes.namespace,
        image=image,
        command=_probe_command(probe, name, out_uri),
        resources=ContainerResources(
            cpu=res.cpu,
            memory=res.memory,
            gpu=0 if in_eval_image else probe.gpus_per_node,
            gpu_key=res.gpu_resource_key,
        ),
        settings=job.kubernetes,
        deadline_s=job.kubernetes.probe_deadline_s,
        labels=_labels(job, "probe", probe=probe.name),
        annotations=_annotations(job),
        env=_env(job, name, extra_env),
        container_name="probe",
        completions=probe.nodes,
        headless_service=probe.nodes > 1,
        checkpoint_read_only=probe.name not in WRITING_PROBES,
        fail_fast_exit_codes=PROBE_FAIL_FAST_EXIT_CODES,
        kueue=job.kueue,
    )
    return JobBundle(kind="probe", name=name, namespace=spec.namespace, job=spec.build(), service=spec.build_service())


def _refuse_shards(request: EvalRequest) -> None:
    # Shards are merged back into one run by the workflow's Aggregate state; Jobs submitted without it
    # would silently run unsharded (or leave unmerged shard files), so a sharded request is refused here.
    from rlinf_bench.sharding import shard_count

    sharded = [s.name for s in request.suites if shard_count(request, s) > 1]
    if sharded:
        raise JobSpecError(
            f"shards: {request.shards} splits {sharded} into shards, which only the workflow merges; set "
            "shards: 1 to submit the Jobs directly, or start the workflow (rlinf-bench pipeline / the stack)"
        )


def jobs_for_request(request: EvalRequest, *, extra_env: Mapping[str, str] | None = None) -> list[JobBundle]:
    """Every Job of ``request`` (eval runs first, then probes), the request checked once before any is built:
    the route without the workflow, whose Plan this is."""
    validate_request(request)
    _refuse_shards(request)
    job = JobFields.of(request)
    root = request.result_root()
    bundles = [
        eval_job(job, run, image=image_for_suite(request, run.suite), extra_env=extra_env)
        for run in request.expand(root)
    ]
    bundles += [
        probe_job(
            job,
            probe,
            image=image_for_probe(request, probe),
            out_uri=probe_result_uri(root, probe.name) if root else "",
            extra_env=extra_env,
        )
        for probe in request.probes
    ]
    names = [b.name for b in bundles]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise JobSpecError(f"two Jobs of the request would share the name(s) {dupes}; list each suite once")
    return bundles
