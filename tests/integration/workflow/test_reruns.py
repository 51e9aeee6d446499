"""Re-runs: a failed evaluation can be run again as the next attempt; a duplicate start still starts nothing."""

from __future__ import annotations

import time

import boto3
import pytest

from rlinf_aws.execution_names import execution_name, parse_execution_name
from rlinf_aws.execution_starter import ExecutionStarter
from tests.integration.workflow.harness import FAIL, REGION, SUCCEED, FakeJobs
from tests.integration.workflow.test_state_machine import request_for, results_for, stack

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("aws_env")]


def wait(arn: str, timeout_s: float = 600.0) -> str:
    # Generous: under a loaded CI machine an execution of moto's engine can take minutes; the test is not about time.
    sfn = boto3.client("stepfunctions", region_name=REGION)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = str(sfn.describe_execution(executionArn=arn)["status"])
        if status != "RUNNING":
            return status
        time.sleep(0.2)
    raise AssertionError(f"{arn} still running after {timeout_s} s")


def test_after_a_failed_attempt_rerun_starts_attempt_2_and_a_duplicate_starts_nothing() -> None:
    outcome = {"jobs": FAIL}
    jobs = FakeJobs(make_result=results_for(100, 0.5), behaviour=lambda b: outcome["jobs"])
    req = request_for(100, probes=())
    with stack(jobs) as st:
        starter = ExecutionStarter(boto3.client("stepfunctions", region_name=REGION), st.state_machine_arn)
        first = starter.start(req)
        assert wait(first.execution_arn) == "FAILED"
        assert starter.start(req).already_started  # a duplicate event: nothing new

        outcome["jobs"] = SUCCEED
        second = starter.rerun(req)
        assert not second.already_started
        assert second.name == execution_name(req, 2) != first.name
        assert parse_execution_name(second.name) == (req.request_id, parse_execution_name(first.name)[1], 2)  # type: ignore[index]
        assert wait(second.execution_arn) == "SUCCEEDED"
        assert starter.start(req).already_started  # attempt 1's name still collapses duplicates
        assert starter.latest_attempt(req) == (2, "SUCCEEDED")
    # Attempt 2's Jobs have names of their own: nothing of attempt 1 was reused by name.
    assert {n for n in jobs.submitted if "-a2-" in n} and all(("-a1-" in n) != ("-a2-" in n) for n in jobs.submitted)


def test_a_changed_eval_matrix_is_a_new_evaluation_not_a_duplicate() -> None:
    jobs = FakeJobs(make_result=results_for(100, 0.5))
    req = request_for(100, probes=())
    wider = req.model_copy(update={"trials_per_task": 5})
    assert execution_name(req) != execution_name(wider)
    with stack(jobs) as st:
        starter = ExecutionStarter(boto3.client("stepfunctions", region_name=REGION), st.state_machine_arn)
        first = starter.start(req)
        wait(first.execution_arn)
        assert not starter.start(wider).already_started
