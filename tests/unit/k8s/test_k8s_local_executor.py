"""The LocalExecutor runs a Job's container command with the same states and failure reasons as a cluster."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from rlinf_bench.contracts import JobSettings
from rlinf_bench.errors import JobNotFoundError, JobSpecError
from rlinf_k8s.jobs import JobBundle, jobs_for_request
from rlinf_k8s.jobspec import ContainerResources, JobSpec
from rlinf_k8s.submitter import JobState, Submitter
from rlinf_local.local_executor import LocalExecutor
from tests.unit.k8s.conftest import make_request

NS = "rlinf-eval"


def _bundle(
    name: str,
    code: str,
    *,
    deadline_s: int = 60,
    backoff_limit: int = 0,
    env: dict[str, str] | None = None,
    fail_fast: tuple[int, ...] = (),
) -> JobBundle:
    spec = JobSpec(
        name=name,
        namespace=NS,
        image="local",
        command=["python", "-c", code],
        resources=ContainerResources(cpu="1", memory="1Gi"),
        settings=JobSettings(backoff_limit=backoff_limit),
        deadline_s=deadline_s,
        env=env or {},
        fail_fast_exit_codes=fail_fast,
    )
    return JobBundle(kind="eval", name=name, namespace=NS, job=spec.build())


@pytest.fixture
def executor(tmp_path: Path):  # type: ignore[no-untyped-def]
    ex = LocalExecutor(tmp_path, max_parallel=2, grace_s=2.0)
    yield ex
    ex.shutdown()


def test_the_local_executor_implements_the_submitter_interface(executor: LocalExecutor) -> None:
    assert isinstance(executor, Submitter)


def test_given_a_succeeding_command_then_succeeded_with_its_output_in_the_logs(executor: LocalExecutor) -> None:
    code = "import os, sys; print(os.environ['MSG'], os.environ['POD_NAME'], sys.executable)"
    executor.submit(_bundle("ok-job", code, env={"MSG": "hello-$(USER_X)"}))

    status = executor.wait("ok-job", NS, timeout_s=60)

    assert status.state == JobState.SUCCEEDED
    assert status.succeeded == 1 and status.exit_code == 0
    out = executor.logs("ok-job", NS)
    assert f"hello-$(USER_X) ok-job-local-0 {sys.executable}" in out  # `python` -> this interpreter


def test_given_a_failing_command_then_failed_backoff_limit_exceeded_with_exit_code_and_log_tail(
    executor: LocalExecutor,
) -> None:
    code = "import sys; print('loading policy'); print('PolicyError: no such checkpoint', file=sys.stderr); sys.exit(3)"
    executor.submit(_bundle("bad-job", code, backoff_limit=1))

    status = executor.wait("bad-job", NS, timeout_s=60)

    assert status.state == JobState.FAILED
    assert status.reason == "BackoffLimitExceeded"
    assert status.exit_code == 3
    assert status.failed == 2  # backoffLimit 1: one retry, like a replacement pod
    assert "exit code 3 after 2 attempt(s)" in status.message
    assert "PolicyError: no such checkpoint" in status.message
    assert executor.logs("bad-job", NS, tail_lines=1).strip() == "PolicyError: no such checkpoint"


def test_given_a_command_running_past_its_deadline_then_killed_and_failed_deadline_exceeded(
    executor: LocalExecutor,
) -> None:
    code = "import time, signal, sys; signal.signal(signal.SIGTERM, lambda *a: sys.exit(143)); time.sleep(120)"
    executor.submit(_bundle("slow-job", code, deadline_s=1, backoff_limit=3))

    status = executor.wait("slow-job", NS, timeout_s=60)

    assert status.state == JobState.FAILED
    assert status.reason == "DeadlineExceeded"
    assert "longer than specified deadline (1 s)" in status.message
    assert status.failed == 0  # a deadline is not retried, whatever the backoffLimit
    assert executor.logs("slow-job", NS).count("==> attempt") == 1


def test_given_the_same_job_twice_then_the_second_submit_is_a_no_op(executor: LocalExecutor, tmp_path: Path) -> None:
    marker = tmp_path / "runs.txt"
    code = f"open({str(marker)!r}, 'a').write('x')"
    first = executor.submit(_bundle("once", code))
    second = executor.submit(_bundle("once", code))
    executor.wait("once", NS, timeout_s=60)

    assert (first.created, second.created) == (True, False)
    assert marker.read_text() == "x"


def test_given_more_jobs_than_slots_then_at_most_max_parallel_run_at_once(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path, max_parallel=1)
    gate = tmp_path / "gate"
    ex.submit(_bundle("first", f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)"))
    ex.submit(_bundle("second", "pass"))
    try:
        deadline = time.monotonic() + 30
        while ex.status("first", NS).state != JobState.RUNNING and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ex.status("first", NS).state == JobState.RUNNING
        assert ex.status("second", NS).state == JobState.PENDING
        gate.touch()
        assert ex.wait("second", NS, timeout_s=60).state == JobState.SUCCEEDED
    finally:
        ex.shutdown()


def test_given_a_running_job_when_cancelled_then_it_is_gone(executor: LocalExecutor) -> None:
    executor.submit(_bundle("cancel-me", "import time; time.sleep(120)"))
    deadline = time.monotonic() + 30
    while executor.status("cancel-me", NS).state != JobState.RUNNING and time.monotonic() < deadline:
        time.sleep(0.02)

    assert executor.cancel("cancel-me", NS) is True
    assert executor.cancel("cancel-me", NS) is False
    with pytest.raises(JobNotFoundError):
        executor.status("cancel-me", NS)


def test_given_a_multi_node_probe_then_the_local_executor_refuses_it_clearly(executor: LocalExecutor) -> None:
    nccl = next(b for b in jobs_for_request(make_request()) if b.service is not None)

    with pytest.raises(JobSpecError, match="multi-node"):
        executor.submit(nccl)


def test_given_no_slots_then_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(JobSpecError, match="at least 1 slot"):
        LocalExecutor(tmp_path, max_parallel=0)


def test_given_a_command_ignoring_sigterm_past_its_deadline_then_it_is_sigkilled_after_the_grace_period(
    tmp_path: Path,
) -> None:
    ex = LocalExecutor(tmp_path, grace_s=0.3)
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"
    try:
        ex.submit(_bundle("stubborn", code, deadline_s=1))
        status = ex.wait("stubborn", NS, timeout_s=60)
    finally:
        ex.shutdown()

    assert status.state == JobState.FAILED
    assert status.reason == "DeadlineExceeded"


def test_given_an_exit_code_matching_a_failjob_rule_then_failed_at_once_without_retries(
    executor: LocalExecutor,
) -> None:
    code = "import sys; print('bad --request: unknown suite', file=sys.stderr); sys.exit(2)"
    executor.submit(_bundle("fail-fast", code, backoff_limit=3, fail_fast=(2,)))

    status = executor.wait("fail-fast", NS, timeout_s=60)

    assert status.state == JobState.FAILED
    assert status.reason == "PodFailurePolicy"
    assert status.failed == 1 and status.exit_code == 2
    assert "unknown suite" in status.message
