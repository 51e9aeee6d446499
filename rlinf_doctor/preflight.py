"""The checks eval and probe Jobs run at start, so an environment problem fails a Job in seconds.

Called from the first lines of ``eval_runner.cli`` and ``infra_probes.probe_cli`` (the core package never
imports those). The report goes into the result's provenance either way; a failure also becomes the
result file's error, with the fix, before any worker or measurement starts.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rlinf_bench.contracts import EvalRun, ProbeResult, ProbeVerdict, Provenance, RunResult, RunStatus
from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import DoctorReport, Target
from rlinf_bench.errors import RlinfBenchError, UnknownSuiteError
from rlinf_doctor.check_runner import run_doctor

log = logging.getLogger("rlinf_bench.doctor")

#: What an eval Job checks before it starts workers (building a LIBERO env is left to the run itself).
EVAL_JOB_CHECKS = (
    "python",
    "packages",
    "libero.assets",
    "rendering.mujoco_gl",
    "rendering.egl",
    "rendering.spawned_frame",
    "gpu",
    "policy",
)
#: What every probe Job checks; each probe adds what it needs (``needs``: the GPU where it measures one, MLflow
#: where it reads one, the dependency a probe would otherwise only find minutes in, after client retries).
PROBE_JOB_CHECKS = ("python", "packages")


class PreflightError(RlinfBenchError):
    """A doctor check failed at the start of a Job; the message names the check and the fix."""


def policy_servers(spec: str) -> list[str]:
    """The server URI of a ``server:ws://...[?options]`` policy spec (empty for in-process policies)."""
    return [spec.removeprefix("server:").split("?", 1)[0]] if spec.startswith("server:") else []


def policy_wait(spec: str) -> float:
    """Seconds the runner's client keeps retrying to connect for this spec (its ``retries``/``backoff_s``/
    ``max_backoff_s`` options; defaults 8, 0.5, 10: about 45 s), so a server still starting is not a failure."""
    from urllib.parse import parse_qs

    from rlinf_bench.retry import RetryPolicy

    if not spec.startswith("server:"):
        return 0.0
    options = {k: v[-1] for k, v in parse_qs(spec.partition("?")[2]).items()}
    try:
        policy = RetryPolicy(
            attempts=int(options.get("retries", 8)) + 1,
            backoff_s=float(options.get("backoff_s", 0.5)),
            max_backoff_s=float(options.get("max_backoff_s", 10.0)),
        )
    except ValueError:  # the runner rejects the spec with its own message
        return 0.0
    return float(sum(policy.delays()))


def eval_preflight(
    run: EvalRun,
    *,
    out: str,
    cache_dir: Path | None = None,
    command: Sequence[str] | None = None,
    s3_client: Any = None,
    write: bool = True,
    provenance: Provenance | None = None,
) -> DoctorReport:
    """Run the eval Job's checks; on failure write a ``failed`` result to ``out`` and raise PreflightError.

    ``write=False`` (a ``--resume`` run) leaves an existing result file alone: its episodes stay resumable.
    ``provenance``: the run's, collected once by the Job (collected here when not given).
    """
    # The runner defaults to headless EGL; check the environment it will actually render in.
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
    ctx = DoctorContext(
        target=Target.EVAL,
        only=list(EVAL_JOB_CHECKS),
        quick=True,
        policy_servers=policy_servers(run.policy),
        policy_wait_s=policy_wait(run.policy),
        cache_dir=cache_dir,
    )
    report = run_doctor(ctx)
    log.info("%s", report.summary())
    if report.ok:
        return report
    message = report.failure_message()
    if write:
        _write_failed_run(run, out, message, report, command, s3_client, provenance)
    raise PreflightError(message)


def _write_failed_run(
    run: EvalRun,
    out: str,
    message: str,
    report: DoctorReport,
    command: Sequence[str] | None,
    s3_client: Any,
    provenance: Provenance | None,
) -> None:
    from rlinf_aws.s3_objects import S3Objects
    from rlinf_bench.contracts.results import Timings
    from rlinf_bench.document_store import Storage
    from rlinf_bench.provenance import collect_provenance
    from rlinf_bench.suites import get_suite
    from rlinf_doctor.nvml_gpus import NvmlGpus

    try:
        suite = get_suite(run.suite)
        max_steps, settle = run.max_steps or suite.max_steps, suite.settle_steps
    except (UnknownSuiteError, RlinfBenchError):
        max_steps, settle = run.max_steps or 1, 0
    now = datetime.now(UTC).isoformat(timespec="seconds")
    result = RunResult.of_run(
        run,
        RunStatus.FAILED,
        error=f"PreflightError: {message}",
        max_steps=max_steps,
        settle_steps=settle,
        timings=Timings(started_at=report.started_at or now, finished_at=now, wall_s=report.wall_s),
        provenance=_with_doctor(provenance or collect_provenance(gpus=NvmlGpus(), command=command), report),
    )
    try:
        Storage(S3Objects(s3_client)).write_text(out, result.to_json(), content_type="application/json")
    except Exception as exc:  # never hide the check's failure behind a write failure
        log.error("could not write the failed result to %s: %s", out, exc)


def _with_doctor(provenance: Provenance, report: DoctorReport) -> Provenance:
    return provenance.model_copy(update={"extra": {**provenance.extra, "doctor": report.record()}})


def probe_preflight(
    probe: str, tracking_uri: str | None = None, experiment: str | None = None, *, needs: Sequence[str] = ()
) -> tuple[DoctorReport, ProbeResult | None]:
    """Run a probe Job's checks (:data:`PROBE_JOB_CHECKS` and the probe's ``needs``, e.g. ``gpu``, ``mlflow``);
    returns the report and, when a check failed, the ``fail`` result to emit.

    A missing GPU is left to the probe itself, which reports it as ``not_available``. Probes only read
    MLflow, so no test run is written there.
    """
    ctx = DoctorContext(
        target=Target.PROBE,
        only=[*PROBE_JOB_CHECKS, *needs],
        tracking_uri=tracking_uri or "",
        experiment=experiment or "RLinf",
        write_test=False,
    )
    report = run_doctor(ctx)
    log.info("%s", report.summary())
    blocking = [c for c in report.failures if c.area != "gpu"]
    if not blocking:
        return report, None
    reason = "; ".join(f"doctor check {c.name} failed: {c.measured}; fix: {c.fix}" for c in blocking)
    failed = ProbeResult(
        probe=probe,
        verdict=ProbeVerdict.FAIL,
        reason=reason,
        details={"doctor": report.record()},
        started_at=report.started_at,
        wall_s=report.wall_s,
    )
    return report, failed


def with_report(result: ProbeResult, report: DoctorReport) -> ProbeResult:
    """``result`` with the doctor report recorded in its details."""
    return result.model_copy(update={"details": {**result.details, "doctor": report.record()}})
