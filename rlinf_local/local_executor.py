"""The :class:`Submitter` for one machine: each Job's container command runs as a local subprocess.

Same Job objects, same interface, same states and failure reasons as on a cluster:

* ``backoffLimit``: a failing command is retried that many times; then the Job fails with
  ``BackoffLimitExceeded`` and a message holding the exit code and the tail of the log.
* ``podFailurePolicy``: an exit code matching a ``FailJob`` rule fails the Job at once
  (``PodFailurePolicy``), without retries, as the Job controller does.
* ``activeDeadlineSeconds``: counted from when the Job starts running here (the local queue is our own
  throttle, like pods waiting for a free GPU would be on a cluster); on expiry the process group gets
  SIGTERM, then SIGKILL after a grace period, and the Job fails with ``DeadlineExceeded``.
* ``python`` in the command means this interpreter (``sys.executable``); the container's env is laid
  over this process's env (so PATH, the venv and AWS settings carry over).
* A concurrency limit (``max_parallel``) stands in for the cluster's GPU capacity.

Multi-node (Indexed) Jobs need a cluster: their rendezvous uses pod DNS names. They are refused.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from rlinf_bench.errors import JobNotFoundError, JobSpecError
from rlinf_k8s.container import local_command
from rlinf_k8s.jobs import JobBundle
from rlinf_k8s.submitter import FailureReason, JobState, JobStatus, SubmitResult

__all__ = ["LocalExecutor"]

log = logging.getLogger(__name__)
MESSAGE_TAIL_LINES = 20
MESSAGE_TAIL_CHARS = 2000


@dataclass
class _LocalJob:
    bundle: JobBundle
    log_path: Path
    deadline_s: float | None
    attempts_allowed: int
    state: JobState = JobState.PENDING
    reason: str | None = None
    message: str = ""
    exit_code: int | None = None
    failed: int = 0
    process: subprocess.Popen[bytes] | None = None
    cancelled: bool = False
    done: threading.Event = field(default_factory=threading.Event)


def _tail(path: Path, lines: int) -> str:
    if not path.exists():
        return ""
    with path.open("r", errors="replace") as fh:
        return "".join(deque(fh, maxlen=lines)).rstrip("\n")


def log_excerpt(path: Path) -> str:
    """What a failure message ends with: the file that holds the whole log, then its last lines; when the
    Job wrote nothing, that it wrote nothing (never a bare "last log lines:")."""
    tail = _tail(path, MESSAGE_TAIL_LINES)[-MESSAGE_TAIL_CHARS:]
    if not tail.strip():
        return f"the Job wrote no log lines (log file: {path})"
    return f"last log lines (whole log: {path}):\n{tail}"


def _fail_job_rule(bundle: JobBundle, code: int) -> int | None:
    """Index of the podFailurePolicy FailJob rule that ``code`` matches, as the Job controller applies it."""
    spec = bundle.job.spec
    policy = spec.pod_failure_policy if spec else None
    for i, rule in enumerate(policy.rules if policy else []):
        req = rule.on_exit_codes
        if rule.action != "FailJob" or req is None:
            continue
        hit = code in req.values
        if (req.operator == "In" and hit) or (req.operator == "NotIn" and not hit):
            return i
    return None


class LocalExecutor:
    """Run Jobs as local subprocesses, at most ``max_parallel`` at a time."""

    def __init__(
        self,
        workdir: str | Path,
        *,
        max_parallel: int = 1,
        python: str = sys.executable,
        cwd: str | Path | None = None,
        grace_s: float = 10.0,
    ) -> None:
        if max_parallel < 1:
            raise JobSpecError(f"max_parallel={max_parallel}: the local executor needs at least 1 slot")
        self.workdir = Path(workdir)
        self.python = python
        self.cwd = Path(cwd) if cwd else Path.cwd()
        self.grace_s = grace_s
        self._slots = threading.Semaphore(max_parallel)
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], _LocalJob] = {}

    # -- Submitter interface --------------------------------------------------------------------
    def submit(self, bundle: JobBundle) -> SubmitResult:
        """Queue the Job; one already known under the same name counts as submitted (not re-run)."""
        spec = bundle.job.spec
        if bundle.service is not None or (spec is not None and (spec.completions or 1) > 1):
            raise JobSpecError(
                f"Job {bundle.name} is a multi-node (Indexed) Job; its torchrun rendezvous needs pod DNS names, "
                "so run it on a cluster (KubernetesSubmitter) or set the probe's nodes to 1"
            )
        key = (bundle.namespace, bundle.name)
        with self._lock:
            if key in self._jobs:
                return SubmitResult(name=bundle.name, namespace=bundle.namespace, created=False)
            folder = self.workdir / bundle.namespace / bundle.name
            folder.mkdir(parents=True, exist_ok=True)
            job = _LocalJob(
                bundle=bundle,
                log_path=folder / "log.txt",
                deadline_s=float(spec.active_deadline_seconds) if spec and spec.active_deadline_seconds else None,
                attempts_allowed=(spec.backoff_limit if spec and spec.backoff_limit is not None else 6) + 1,
            )
            self._jobs[key] = job
        threading.Thread(target=self._run, args=(job,), name=f"local-job-{bundle.name}", daemon=True).start()
        return SubmitResult(name=bundle.name, namespace=bundle.namespace, created=True)

    def status(self, name: str, namespace: str) -> JobStatus:
        """The Job's state as on a cluster (pending while queued, running while its process lives)."""
        job = self._get(name, namespace)
        with self._lock:
            return JobStatus(
                name=name,
                namespace=namespace,
                state=job.state,
                reason=job.reason,
                message=job.message,
                active=1 if job.state == JobState.RUNNING else 0,
                succeeded=1 if job.state == JobState.SUCCEEDED else 0,
                failed=job.failed,
                exit_code=job.exit_code,
            )

    def logs(self, name: str, namespace: str, *, tail_lines: int = 100) -> str:
        """The last ``tail_lines`` lines of the Job's combined stdout/stderr (all attempts)."""
        return _tail(self._get(name, namespace).log_path, tail_lines)

    def cancel(self, name: str, namespace: str) -> bool:
        """Stop the Job's process (if running) and forget the Job, like deleting it on a cluster."""
        with self._lock:
            job = self._jobs.pop((namespace, name), None)
            if job is None:
                return False
            job.cancelled = True
            proc = job.process
        if proc is not None and proc.poll() is None:
            self._terminate(proc)
        return True

    # -- local extras -------------------------------------------------------------------------------
    def wait(self, name: str, namespace: str, *, timeout_s: float | None = None) -> JobStatus:
        """Block until the Job is finished (or ``timeout_s`` passes) and return its status."""
        self._get(name, namespace).done.wait(timeout_s)
        return self.status(name, namespace)

    def shutdown(self) -> None:
        """Cancel every Job still known (used at exit so no subprocess outlives the pipeline)."""
        with self._lock:
            keys = list(self._jobs)
        for namespace, name in keys:
            self.cancel(name, namespace)

    # -- internals ------------------------------------------------------------------------------
    def _get(self, name: str, namespace: str) -> _LocalJob:
        with self._lock:
            job = self._jobs.get((namespace, name))
        if job is None:
            raise JobNotFoundError(f"no local Job {namespace}/{name}: never submitted here, or cancelled")
        return job

    def _set(self, job: _LocalJob, state: JobState, **fields: object) -> None:
        with self._lock:
            job.state = state
            for key, value in fields.items():
                setattr(job, key, value)

    def _run(self, job: _LocalJob) -> None:
        try:
            with self._slots:
                if job.cancelled:
                    return
                self._attempts(job)
        except Exception as exc:  # a bug or an OS error must still end the Job, visibly
            log.exception("local Job %s crashed", job.bundle.name)
            self._set(job, JobState.FAILED, reason=FailureReason.ERROR, message=f"local executor error: {exc!r}")
        finally:
            job.done.set()

    def _attempts(self, job: _LocalJob) -> None:
        started = time.monotonic()
        for attempt in range(job.attempts_allowed):
            remaining = None if job.deadline_s is None else job.deadline_s - (time.monotonic() - started)
            if remaining is not None and remaining <= 0:
                self._deadline(job)
                return
            code = self._one_attempt(job, attempt, remaining)
            if job.cancelled:
                return
            if code is None:
                self._deadline(job)
                return
            if code == 0:
                self._set(job, JobState.SUCCEEDED, exit_code=0, reason=None, message="")
                return
            with self._lock:
                job.failed += 1
                job.exit_code = code
            rule = _fail_job_rule(job.bundle, code)
            if rule is not None:
                self._set(
                    job,
                    JobState.FAILED,
                    reason=FailureReason.POD_FAILURE_POLICY,
                    message=f"exit code {code} matching FailJob rule at index {rule}; {log_excerpt(job.log_path)}",
                )
                return
            if attempt + 1 < job.attempts_allowed:
                self._set(job, JobState.PENDING)  # like a replacement pod waiting to start
        self._set(
            job,
            JobState.FAILED,
            reason=FailureReason.BACKOFF_LIMIT_EXCEEDED,
            message=f"exit code {job.exit_code} after {job.failed} attempt(s); {log_excerpt(job.log_path)}",
        )

    def _deadline(self, job: _LocalJob) -> None:
        self._set(
            job,
            JobState.FAILED,
            reason=FailureReason.DEADLINE_EXCEEDED,
            message=f"Job was active longer than specified deadline ({job.deadline_s:g} s)",
        )

    def _one_attempt(self, job: _LocalJob, attempt: int, timeout_s: float | None) -> int | None:
        """Run the command once; its exit code, or None when the deadline killed it."""
        name = job.bundle.name
        cmd = local_command(job.bundle.job, pod_name=f"{name}-local-{attempt}", python=self.python)
        env = {**os.environ, **cmd.env}
        with job.log_path.open("ab") as out:
            out.write(f"==> attempt {attempt + 1}: {cmd.argv[0]} ... ({len(cmd.argv)} args) <==\n".encode())
            out.flush()
            with self._lock:
                if job.cancelled:
                    return 1
                # A new session so the deadline can kill the whole process tree (env workers included).
                proc = subprocess.Popen(
                    cmd.argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=self.cwd, start_new_session=True
                )
                job.process = proc
                job.state = JobState.RUNNING
            try:
                return proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self._terminate(proc)
                return None

    def _terminate(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGTERM the process group, then SIGKILL after the grace period (the kubelet's sequence)."""
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=self.grace_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                return
            proc.wait()
