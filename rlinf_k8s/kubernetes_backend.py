"""The :class:`Submitter` for a real cluster, through the official ``kubernetes`` client.

Idempotent: Job names are derived from the request, so re-submitting the same run hits a 409, which
counts as success. A multi-node probe is a Job plus a headless Service; the Service is created after
the Job and owned by it (ownerReference), so deleting the Job (cancel, or its TTL) removes the
Service too, and a Service that fails to be created makes us delete the Job we just created: nothing
half-created is left behind.
"""

from __future__ import annotations

import logging

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from rlinf_bench.errors import JobNotFoundError, KubernetesError
from rlinf_k8s.api_client import ApiCaller
from rlinf_k8s.job_status import JOB_NAME_LABEL, job_status_from
from rlinf_k8s.jobs import JobBundle
from rlinf_k8s.pod_security import require_restricted
from rlinf_k8s.queue_sentinel import QueuedJob, read_queue
from rlinf_k8s.submitter import JobStatus, SubmitResult

__all__ = ["KubernetesSubmitter"]

log = logging.getLogger(__name__)


class KubernetesSubmitter:
    """Submit, watch, read and cancel Jobs on one cluster."""

    def __init__(self, caller: ApiCaller) -> None:
        self._caller = caller
        self._call = caller.call
        self._batch = k8s.BatchV1Api(caller.api_client)
        self._core = k8s.CoreV1Api(caller.api_client)

    # -- submit ---------------------------------------------------------------------------------
    def submit(self, bundle: JobBundle) -> SubmitResult:
        """Create the Job (then its Service); an existing Job of the same name counts as submitted."""
        for manifest in bundle.manifests():
            if manifest["kind"] == "Job":
                require_restricted(manifest)  # last check before anything reaches the cluster
        ns = bundle.namespace
        created = True
        try:
            job = self._call(f"create Job {ns}/{bundle.name}", self._batch.create_namespaced_job, ns, bundle.job)
        except ApiException as exc:
            if exc.status != 409:
                raise _api_error(f"create Job {ns}/{bundle.name}", exc) from exc
            log.info("Job %s/%s already exists: treating the re-submission as done", ns, bundle.name)
            created = False
            if bundle.service is not None:  # the Service's ownerReference needs the existing Job's uid
                job = self._call(f"read Job {ns}/{bundle.name}", self._batch.read_namespaced_job, bundle.name, ns)
        if bundle.service is not None:
            try:
                self._create_owned_service(bundle.service, job)
            except Exception as exc:
                if created:
                    self._rollback(bundle, exc)
                raise
        return SubmitResult(name=bundle.name, namespace=ns, created=created)

    def _create_owned_service(self, service: k8s.V1Service, job: k8s.V1Job) -> None:
        meta = service.metadata or k8s.V1ObjectMeta()
        uid = job.metadata.uid if job.metadata else None
        if job.metadata is None or not uid:
            raise KubernetesError(f"the API server returned Job {meta.name} without a uid; cannot own its Service")
        owned = service.model_copy(deep=True)
        if owned.metadata is None:
            raise KubernetesError(f"Service for Job {job.metadata.name} has no metadata; build it with JobSpec")
        owned.metadata.owner_references = [
            k8s.V1OwnerReference(api_version="batch/v1", kind="Job", name=job.metadata.name, uid=uid)
        ]
        what = f"create Service {meta.namespace}/{meta.name}"
        try:
            self._call(what, self._core.create_namespaced_service, meta.namespace, owned)
        except ApiException as exc:
            if exc.status != 409:
                raise _api_error(what, exc) from exc

    def _rollback(self, bundle: JobBundle, cause: BaseException) -> None:
        """Delete the Job we created when its Service could not be; report both failures if that fails too."""
        log.warning("Service for Job %s/%s failed (%s); deleting the Job", bundle.namespace, bundle.name, cause)
        try:
            self._delete_job(bundle.name, bundle.namespace)
        except Exception as cleanup_exc:
            raise KubernetesError(
                f"submitting {bundle.namespace}/{bundle.name} failed ({cause}) and deleting the half-created Job "
                f"failed too ({cleanup_exc}); delete it by hand: kubectl -n {bundle.namespace} delete job {bundle.name}"
            ) from cleanup_exc

    def queued_jobs(self, namespace: str) -> list[QueuedJob]:
        """Our Kueue Jobs in ``namespace`` with their phase and wait (what the queue sentinel sweeps)."""
        return read_queue(self._caller, namespace)

    # -- status, logs, cancel -------------------------------------------------------------------
    def status(self, name: str, namespace: str) -> JobStatus:
        """The Job's state, with the failure reason read from the Job's conditions and its pods."""
        try:
            job = self._call(f"read Job {namespace}/{name}", self._batch.read_namespaced_job_status, name, namespace)
        except ApiException as exc:
            if exc.status == 404:
                raise JobNotFoundError(
                    f"no Job {namespace}/{name}: never submitted, cancelled, or deleted by its TTL"
                ) from exc
            raise _api_error(f"read Job {namespace}/{name}", exc) from exc
        return job_status_from(job, self._pods(name, namespace))

    def _pods(self, name: str, namespace: str) -> list[k8s.V1Pod]:
        what = f"list pods of Job {namespace}/{name}"
        try:
            pods = self._call(
                what, self._core.list_namespaced_pod, namespace, label_selector=f"{JOB_NAME_LABEL}={name}"
            )
        except ApiException as exc:
            raise _api_error(what, exc) from exc
        items: list[k8s.V1Pod] = list(pods.items or [])

        def created(p: k8s.V1Pod) -> str:
            ts = p.metadata.creation_timestamp if p.metadata else None
            return ts.isoformat() if ts else ""

        return sorted(items, key=created)

    def logs(self, name: str, namespace: str, *, tail_lines: int = 100) -> str:
        """The tail of every pod's log (oldest pod first), each under a header line naming the pod."""
        pods = self._pods(name, namespace)
        if not pods:
            self.status(name, namespace)  # raises JobNotFoundError when the Job itself is gone
            return ""
        chunks: list[str] = []
        for pod in pods:
            pod_name = pod.metadata.name if pod.metadata else "?"
            what = f"read log of pod {namespace}/{pod_name}"
            try:
                text = self._call(what, self._core.read_namespaced_pod_log, pod_name, namespace, tail_lines=tail_lines)
            except ApiException as exc:
                if exc.status != 400:  # 400: the container has not started, so it has no log yet
                    raise _api_error(what, exc) from exc
                text = f"(no log yet: {exc.reason})"
            header = f"==> pod {pod_name} <==\n" if len(pods) > 1 else ""
            chunks.append(header + str(text).rstrip("\n"))
        return "\n".join(chunks)

    def cancel(self, name: str, namespace: str) -> bool:
        """Delete the Job with background propagation (its pods and owned Service go with it)."""
        try:
            self._delete_job(name, namespace)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise _api_error(f"delete Job {namespace}/{name}", exc) from exc
        return True

    def _delete_job(self, name: str, namespace: str) -> None:
        # Without a propagation policy, batch/v1 Job deletion orphans the pods (legacy default).
        self._call(
            f"delete Job {namespace}/{name}",
            self._batch.delete_namespaced_job,
            name,
            namespace,
            propagation_policy="Background",
        )


def _api_error(what: str, exc: ApiException) -> KubernetesError:
    body = (exc.body or "").strip()
    detail = body[:500] if body else ""
    hint = ""
    if exc.status == 422:
        hint = (
            "; the API server rejected the manifest: run `rlinf-bench render-jobs` and check it with kubectl --dry-run"
        )
    elif exc.status == 404:
        hint = "; does the namespace exist? apply deploy/k8s/ first"
    return KubernetesError(f"{what}: {exc.status} {exc.reason}{hint}" + (f"\n{detail}" if detail else ""))
