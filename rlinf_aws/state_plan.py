"""The plan state: check an EvalRequest as a whole, then lay out the Map items (suite x run, and probes).

Everything a Job would trip over later is checked here, once, before any Job starts
(:func:`rlinf_bench.request_checks.validate_request`): an unknown suite, task, baseline or probe, too many
trials, or a missing image fails the execution at once, and the failure notification names the field and
the allowed values. Nothing after Plan checks the request again: each Map iteration gets its item (the
EvalRun or probe, the Job's name and image) and the Job fields the request's Jobs share, not the request.
"""

from __future__ import annotations

from rlinf_aws.execution_names import execution_name, matrix_digest
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_bench.contracts.layout import probe_result_uri
from rlinf_bench.contracts.request import REFERENCE_BASELINES, EvalRequest, KueueSettings, ProbeSpec
from rlinf_bench.contracts.workflow import JobFields, PlanInput, PlanResult, ShardRef, WorkItem
from rlinf_bench.errors import InvalidRequestError
from rlinf_bench.reporting.message_limits import SFN_STATE_OUTPUT_MAX_BYTES, utf8_len
from rlinf_bench.request_checks import image_for_probe, image_for_suite, validate_request
from rlinf_bench.robustness import matrix_budget
from rlinf_bench.sharding import RunShard, expand_shards
from rlinf_k8s.dns_names import eval_job_name, probe_job_name

__all__ = ["REFERENCE_BASELINES", "eval_items", "plan", "resolve_request"]


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
    if request.kueue is None and settings.kueue_queue:
        # The stack's default queue (KueueQueue); a request that names its own keeps it.
        updates["kueue"] = KueueSettings(
            queue=settings.kueue_queue,
            priority_class=settings.kueue_priority_class,
            queue_limit_min=settings.kueue_queue_limit_min,
        )
    return request.model_copy(update=updates) if updates else request


def _probe_item(request: EvalRequest, probe: ProbeSpec, base: str, root: str, heartbeat_s: int) -> WorkItem:
    return WorkItem(
        kind="probe",
        job_name=probe_job_name(base, probe.name, probe.nodes),
        namespace=request.kubernetes.namespace,
        image=image_for_probe(request, probe),
        result_uri=probe_result_uri(root, probe.name),
        heartbeat_s=heartbeat_s,
        timeout_s=request.kubernetes.probe_deadline_s + request.queue_allowance_s(),
        probe=probe,
    )


def _eval_item(request: EvalRequest, shard: RunShard, base: str, heartbeat_s: int) -> WorkItem:
    """The Map item of one eval run, or of one shard of it (its own Job name and result file)."""
    run = shard.run
    sharded = shard.count > 1
    return WorkItem(
        kind="eval",
        job_name=eval_job_name(base, run.suite, run.run_index, (shard.index, shard.count) if sharded else None),
        namespace=request.kubernetes.namespace,
        image=image_for_suite(request, run.suite),
        result_uri=run.output_uri or "",
        heartbeat_s=heartbeat_s,
        timeout_s=request.kubernetes.eval_deadline_s + request.queue_allowance_s(),
        run=run,
        shard=ShardRef(index=shard.index, count=shard.count, run_uri=shard.run_uri) if sharded else None,
    )


def eval_items(request: EvalRequest, root: str, base: str) -> list[WorkItem]:
    """One Map item per eval run of ``request`` (per shard of a sharded run), its Jobs named after ``base``."""
    return [_eval_item(request, shard, base, request.workflow.heartbeat_s) for shard in expand_shards(request, root)]


def plan(inp: PlanInput, settings: PipelineSettings) -> PlanResult:
    """Resolve and check the request, then build one WorkItem per eval run (per shard of a sharded run,
    :mod:`rlinf_bench.sharding`) and per probe, and the Job fields they share."""
    request = resolve_request(inp.request, settings)
    validate_request(request, workflow=True)
    base = inp.execution or execution_name(request)
    # Attempts share the root (a re-run keeps the runs that finished): it carries the matrix digest of the
    # request as it was started (before the deployment filled images and prefixes), as the execution name does.
    root = request.result_root(matrix_digest(inp.request))
    probe_items = [_probe_item(request, p, base, root, request.workflow.heartbeat_s) for p in request.probes]
    result = PlanResult(
        request=request,
        execution=base,
        result_root=root,
        job=JobFields.of(request),
        eval_items=eval_items(request, root, base),
        probe_items=probe_items,
        max_concurrency=request.workflow.max_concurrency,
        budget=matrix_budget(request).line(),
    )
    _check_fits(result)
    return result


def _check_fits(result: PlanResult) -> None:
    """Step Functions refuses a state output over 256 KiB and the execution fails without a word: refuse it here,
    naming what makes it big and what to change."""
    size = utf8_len(result.model_dump_json())
    if size > SFN_STATE_OUTPUT_MAX_BYTES:
        raise InvalidRequestError(
            f"the plan of this request is {size:,} bytes ({len(result.eval_items)} eval Jobs, "
            f"{len(result.probe_items)} probe Jobs); Step Functions carries at most {SFN_STATE_OUTPUT_MAX_BYTES:,} "
            "between states: evaluate fewer suites, runs or shards per checkpoint (or list fewer task ids)"
        )
