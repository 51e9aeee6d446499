"""A Job always reports: an exit before the Job's own callback (argument error, import error, crash) is sent
to Step Functions as a task failure, so the execution does not wait for the heartbeat timeout."""

from __future__ import annotations

import runpy
import sys
from typing import Any

import pytest

from rlinf_aws import task_callback
from rlinf_aws.job_entry import INTERRUPTED_EXIT, run_job

TOKEN = {"RLINF_BENCH_TASK_TOKEN": "tok"}


class FakeSfn:
    def __init__(self) -> None:
        self.failures: list[dict[str, Any]] = []
        self.successes: list[dict[str, Any]] = []

    def send_task_failure(self, **kw: Any) -> None:
        self.failures.append(kw)

    def send_task_success(self, **kw: Any) -> None:
        self.successes.append(kw)

    def send_task_heartbeat(self, **kw: Any) -> None:
        pass


@pytest.fixture(autouse=True)
def no_callback_sent_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    # Other tests of the session send callbacks: this process-wide flag starts clear for each test here.
    monkeypatch.setattr(task_callback, "_FINAL_SENT", type(task_callback._FINAL_SENT)())


@pytest.fixture
def sfn(monkeypatch: pytest.MonkeyPatch) -> FakeSfn:
    import boto3

    fake = FakeSfn()
    monkeypatch.setattr(boto3, "client", lambda *a, **k: fake)
    monkeypatch.setenv("RLINF_BENCH_TASK_TOKEN", "tok")
    return fake


def test_a_probe_job_missing_a_required_argument_sends_the_failure_callback_naming_it(
    sfn: FakeSfn, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["python -m infra_probes", "storage", "--json"])
    sys.modules.pop("infra_probes.__main__", None)
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_module("infra_probes", run_name="__main__")
    assert exit_info.value.code == 2
    assert "--path" in capsys.readouterr().err
    (failure,) = sfn.failures
    assert failure["taskToken"] == "tok"
    assert failure["error"] == "JobStartFailed"
    assert "python -m infra_probes" in failure["cause"] and "status 2" in failure["cause"]


def test_an_eval_job_with_a_bad_flag_sends_the_failure_callback(sfn: FakeSfn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["python -m eval_runner", "--no-such-flag"])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_module("eval_runner", run_name="__main__")
    assert exit_info.value.code == 2
    assert [f["error"] for f in sfn.failures] == ["JobStartFailed"]


def test_an_import_error_or_a_crash_in_start_up_is_reported_with_its_type() -> None:
    sent: list[tuple[str, str]] = []

    def broken_import() -> Any:
        raise ImportError("No module named 'torch'")

    assert run_job(broken_import, program="job", env=TOKEN, send_failure=lambda e, c: sent.append((e, c))) == 1
    assert sent[0][0] == "ImportError" and "torch" in sent[0][1]


def test_an_interruption_is_left_to_kubernetes_and_a_job_that_called_back_is_not_reported_twice(
    sfn: FakeSfn,
) -> None:
    sent: list[tuple[str, str]] = []

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert run_job(lambda: interrupted, program="job", env=TOKEN, send_failure=lambda e, c: sent.append((e, c))) == (
        INTERRUPTED_EXIT
    )

    def fails_after_its_callback() -> int:
        task_callback.TaskCallback("tok").fail("RunFailed", "episode 3 crashed")
        raise SystemExit(2)

    assert (
        run_job(
            lambda: fails_after_its_callback, program="job", env=TOKEN, send_failure=lambda e, c: sent.append((e, c))
        )
        == 2
    )
    assert sent == []
    assert [f["error"] for f in sfn.failures] == ["RunFailed"]


def test_outside_a_workflow_nothing_is_sent_and_the_status_is_kept() -> None:
    def bad_args() -> int:
        raise SystemExit(2)

    assert run_job(lambda: bad_args, program="job", env={}, send_failure=lambda e, c: pytest.fail("sent")) == 2
