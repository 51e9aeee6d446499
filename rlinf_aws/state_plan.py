"""The plan state: check an EvalRequest as a whole, then lay out the Map items (suite x run, and probes).

Everything a Job would trip over later is checked here, before any Job starts: an unknown suite, task,
baseline or probe, or a missing image fails the execution at once, and the failure notification names
the field and the allowed values.
"""

from __future__ import annotations

from rlinf_aws.execution_names import execution_name, matrix_digest
from rlinf_aws.settings import PipelineSettings
from rlinf_bench.contracts.request import EvalRequest, ProbeSpec
from rlinf_bench.contracts.workflow import PlanInput, PlanResult, WorkItem
from rlinf_bench.errors import ConfigError
from rlinf_bench.storage import join
from rlinf_k8s.dns_names import eval_job_name, probe_job_name

__all__ = ["REFERENCE_BASELINES", "plan", "resolve_request", "result_root", "validate_request"]

#: Baseline names that are not tables but earlier checkpoints, read back from MLflow.
REFERENCE_BASELINES = frozenset({"previous", "best"})


def resolve_request(request: EvalRequest, settings: PipelineSettings) -> EvalRequest:
    """Fill what the deployment decides (images, namespace, results prefix) where the request leaves it open."""
    updates: dict[str, object] = {}
    if not request.image and settings.eval_image:
        updates["image"] = settings.eval_image
    if not request.probe_image and settings.probe_image:
        updates["probe_image"] = settings.probe_image
    if not request.output_prefix and settings.results_prefix:
        updates["output_prefix"] = settings.results_prefix
    if settings.namespace and request.kubernetes.namespace != settings.namespace:
        # The stack's RBAC only lets the submitter create Jobs in its own namespace.
        updates["kubernetes"] = request.kubernetes.model_copy(update={"namespace": settings.namespace})
    return request.model_copy(update=updates) if updates else request


def validate_request(request: EvalRequest) -> None:
    """Raise a ConfigError naming the field and its allowed values for anything no Job could run."""
    from rlinf_bench.baselines import get_baselines
    from rlinf_bench.suites import get_suite, resolve_task_ids

    for i, suite in enumerate(request.suites):
        spec = get_suite(suite.name)  # UnknownSuiteError lists the known suites
        try:
            resolve_task_ids(spec, suite.tasks)
        except ConfigError as exc:
            raise ConfigError(f"suites[{i}].tasks: {exc}") from exc
    get_baselines([b for b in request.baselines if b not in REFERENCE_BASELINES])
    if request.suites and not request.image.strip():
        raise ConfigError("image: the request has suites but no eval image; set `image` or EVAL_IMAGE")
    if request.probes and not request.probe_image.strip():
        raise ConfigError("probe_image: the request has probes but no probe image; set `probe_image` or PROBE_IMAGE")
    if not request.output_prefix:
        raise ConfigError("output_prefix: results need a place; set `output_prefix` or RESULTS_PREFIX")
    wf = request.workflow
    shortest = min(
        [request.kubernetes.eval_deadline_s] * bool(request.suites)
        + [request.kubernetes.probe_deadline_s] * bool(request.probes),
        default=0,
    )
    if shortest and wf.heartbeat_s >= shortest + wf.queue_s:
        raise ConfigError(
            f"workflow.heartbeat_s={wf.heartbeat_s} must be below a Job's timeout ({shortest + wf.queue_s} s = "
            "deadline + workflow.queue_s); lower it or raise the deadline"
        )
    names = [p.name for p in request.probes]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"probes: {', '.join(twice)} listed twice; each probe runs once per request")


def result_root(request: EvalRequest, digest: str) -> str:
    """Where one checkpoint's results for one eval matrix live; attempts share it, so a re-run keeps
    the runs that finished and redoes only the others. ``digest`` is the matrix hash of the request as
    it was started (before the deployment filled images and prefixes), as in the execution name."""
    return join(request.output_prefix, request.request_id, f"m{digest}")


def _probe_item(request: EvalRequest, probe: ProbeSpec, base: str, root: str, heartbeat_s: int) -> WorkItem:
    return WorkItem(
        kind="probe",
        job_name=probe_job_name(base, probe.name, probe.nodes),
        namespace=request.kubernetes.namespace,
        result_uri=join(root, "probes", f"{probe.name}.json"),
        heartbeat_s=heartbeat_s,
        timeout_s=request.kubernetes.probe_deadline_s + request.workflow.queue_s,
        probe=probe,
    )


def plan(inp: PlanInput, settings: PipelineSettings) -> PlanResult:
    """Resolve and check the request, then build one WorkItem per eval run and per probe."""
    request = resolve_request(inp.request, settings)
    validate_request(request)
    base = inp.execution or execution_name(request)
    root = result_root(request, matrix_digest(inp.request))
    heartbeat_s = request.workflow.heartbeat_s
    eval_items = []
    for run in request.expand():
        run = run.model_copy(update={"output_uri": join(root, run.suite, f"run{run.run_index}.json")})
        eval_items.append(
            WorkItem(
                kind="eval",
                job_name=eval_job_name(base, run.suite, run.run_index),
                namespace=request.kubernetes.namespace,
                result_uri=run.output_uri or "",
                heartbeat_s=heartbeat_s,
                timeout_s=request.kubernetes.eval_deadline_s + request.workflow.queue_s,
                run=run,
            )
        )
    probe_items = [_probe_item(request, p, base, root, heartbeat_s) for p in request.probes]
    return PlanResult(
        request=request,
        execution=base,
        result_root=root,
        eval_items=eval_items,
        probe_items=probe_items,
        max_concurrency=request.workflow.max_concurrency,
    )
