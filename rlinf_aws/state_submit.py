"""The submit state: one Map item becomes one Kubernetes Job that will call back with the task token.

The Job is named after the execution, so a re-submission of the same item (a Lambda retry) finds the
Job already there and counts as success: nothing runs twice. A cluster that does not answer, or a
token refused after one refresh, fails after the client's bounded retries; the state's Catch then
turns that into a failed run carrying the reason.
"""

from __future__ import annotations

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.task_callback import HEARTBEAT_ENV, TOKEN_ENV
from rlinf_bench.contracts.workflow import SubmitInput, SubmitResult
from rlinf_bench.errors import JobSpecError
from rlinf_k8s.jobs import JobBundle, eval_job, probe_job
from rlinf_k8s.submitter import Submitter

__all__ = ["build_job", "job_env", "submit"]


def job_env(inp: SubmitInput, settings: PipelineSettings) -> dict[str, str]:
    """What a Job needs to call back: the token, the heartbeat period and the region (plus JOB_ENV)."""
    env = dict(settings.job_env)
    if settings.region:
        env.setdefault("AWS_REGION", settings.region)
        env.setdefault("AWS_DEFAULT_REGION", settings.region)
    env[TOKEN_ENV] = inp.task_token
    env[HEARTBEAT_ENV] = str(inp.item.heartbeat_s)
    return env


def build_job(inp: SubmitInput, settings: PipelineSettings) -> JobBundle:
    """The Job (and Service) of one item, under the name and image the Plan state gave it, from the Job fields
    its request's Jobs share; the request was checked at Plan and is not checked again here."""
    item = inp.item
    env = job_env(inp, settings)
    if item.kind == "eval":
        if item.run is None:
            raise JobSpecError(f"eval item {item.job_name} carries no run")
        return eval_job(inp.job, item.run, image=item.image, extra_env=env, name=item.job_name)
    if item.probe is None:
        raise JobSpecError(f"probe item {item.job_name} carries no probe")
    return probe_job(inp.job, item.probe, image=item.image, out_uri=item.result_uri, extra_env=env, name=item.job_name)


def submit(inp: SubmitInput, submitter: Submitter, settings: PipelineSettings) -> SubmitResult:
    """Create the item's Job; an existing Job of that name counts as submitted."""
    result = submitter.submit(build_job(inp, settings))
    return SubmitResult(job_name=result.name, namespace=result.namespace, created=result.created)
