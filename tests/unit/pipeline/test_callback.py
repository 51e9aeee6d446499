"""A Job's callbacks: heartbeats while it runs, one final call, and the token never in a log."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from rlinf_aws.task_callback import TaskCallback, reporting_to_state_machine
from rlinf_bench.contracts.workflow import JobCallback
from rlinf_bench.errors import ConfigError

TOKEN = "AAAAsecret-task-token-0123456789"


class FakeSfn:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def send_task_heartbeat(self, **kw: Any) -> None:
        self.calls.append(("heartbeat", kw))

    def send_task_success(self, **kw: Any) -> None:
        self.calls.append(("success", kw))

    def send_task_failure(self, **kw: Any) -> None:
        self.calls.append(("failure", kw))


def test_from_env_needs_a_token_and_hides_it() -> None:
    assert TaskCallback.from_env({}) is None
    cb = TaskCallback.from_env({"RLINF_BENCH_TASK_TOKEN": TOKEN, "RLINF_BENCH_HEARTBEAT_S": "30"})
    assert cb is not None and TOKEN not in repr(cb) and cb.heartbeat_interval_s == 10.0


def test_heartbeats_run_while_the_job_works_then_success_is_sent_once(caplog: pytest.LogCaptureFixture) -> None:
    sfn = FakeSfn()
    cb = TaskCallback(TOKEN, heartbeat_s=3, sfn_factory=lambda: sfn)
    with caplog.at_level(logging.DEBUG), reporting_to_state_machine(cb):
        time.sleep(1.3)
        cb.succeed(JobCallback(kind="eval", result_uri="s3://b/r.json", suite="libero_goal", run_index=0))
    kinds = [k for k, _ in sfn.calls]
    assert kinds.count("heartbeat") >= 2 and kinds[-1] == "success" and "failure" not in kinds
    assert TOKEN not in caplog.text


def test_an_error_is_sent_as_failure_naming_it_and_re_raised() -> None:
    sfn = FakeSfn()
    cb = TaskCallback(TOKEN, sfn_factory=lambda: sfn)
    with pytest.raises(ConfigError), reporting_to_state_machine(cb):
        raise ConfigError("unknown suite 'libero_nowhere'")
    (kind, kw) = sfn.calls[-1]
    assert kind == "failure" and kw["error"] == "ConfigError" and "libero_nowhere" in kw["cause"]


def test_an_interruption_is_not_reported_so_kubernetes_can_retry_the_pod() -> None:
    sfn = FakeSfn()
    cb = TaskCallback(TOKEN, sfn_factory=lambda: sfn)
    with pytest.raises(KeyboardInterrupt), reporting_to_state_machine(cb):
        raise KeyboardInterrupt
    assert "failure" not in [k for k, _ in sfn.calls]
