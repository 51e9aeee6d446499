"""What each Map iteration hands its Lambdas, as moto's engine runs the real ASL: the item and the Job fields, never
the whole request, and small whatever the size of the eval matrix.

GIVEN a 4-suite x 3-run matrix with a probe, WHEN the execution fans out (one Job failing, so the failure branch
runs too), THEN every job_submitter and explain_run event carries its item and no request, and stays within 2 KiB:
the same size as the events of a one-suite, one-run matrix (with the whole request they were 2.7 KiB and grew with
every suite, probe and baseline).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from rlinf_aws.execution_names import execution_name
from rlinf_bench.contracts import EvalRequest, ProbeSpec, SuiteSelection
from rlinf_bench.contracts.suite_names import DEFAULT_SUITES
from rlinf_k8s.jobs import JobBundle
from tests.integration.workflow.harness import FAIL, FUNCTIONS, SUCCEED, FakeJobs, WorkflowStack
from tests.integration.workflow.test_state_machine import ckpt, results_for, stack

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("aws_env")]

#: An iteration's event without its task token (whose length is the service's, not ours): the item (an EvalRun
#: with its checkpoint, Job name, image and result URI) and the Job fields (resources, Kubernetes settings).
MAX_EVENT_BYTES = 2 * 1024
#: What only the request has: none of it may ride in an iteration.
REQUEST_ONLY_KEYS = {"request", "suites", "baselines", "probes", "seeds", "workflow", "output_prefix", "extra"}


def _matrix(suites: tuple[str, ...], runs: int) -> EvalRequest:
    return EvalRequest(
        checkpoint=ckpt(100),
        suites=[SuiteSelection(name=s, tasks=[0, 1]) for s in suites],
        runs=runs,
        seeds=list(range(runs)),
        trials_per_task=4,
        probes=[ProbeSpec(name="gpu")],
        baselines=["previous"],
    )


def _keys(doc: Any) -> set[str]:
    """Every key of a JSON document, at any depth."""
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


def _record(st: WorkflowStack, function_arn_key: str) -> list[dict[str, Any]]:
    """The events the Lambda behind ``function_arn_key`` receives from the state machine, as it receives them."""
    name, _ = FUNCTIONS[function_arn_key]
    real = st.lambdas.handlers[name]
    seen: list[dict[str, Any]] = []

    def recording(event: Any, context: Any) -> Any:
        seen.append(json.loads(json.dumps(event)))
        return real(event, context)

    st.lambdas.handlers[name] = recording
    return seen


def _size(event: dict[str, Any]) -> int:
    """Bytes of the event as Step Functions sends it (compact JSON), without the task token."""
    rest = {k: v for k, v in event.items() if k != "task_token"}
    return len(json.dumps(rest, separators=(",", ":")).encode())


def _fan_out(req: EvalRequest, behaviour: Callable[[JobBundle], str]) -> tuple[list[dict], list[dict]]:
    jobs = FakeJobs(make_result=results_for(100, 0.5), behaviour=behaviour)
    with stack(jobs) as st:
        submitted = _record(st, "JobSubmitterFunctionArn")
        notified = _record(st, "FailureNotifierFunctionArn")
        desc = st.run(req.to_json(), execution_name(req), timeout_s=240)
        assert desc["status"] == "SUCCEEDED", desc
    return submitted, [e for e in notified if e.get("action") == "explain_run"]


def test_a_four_suite_three_run_matrix_sends_each_iteration_its_item_and_job_fields_not_the_request() -> None:
    big = _matrix(DEFAULT_SUITES, runs=3)
    failing = "libero-goal-r1"
    submitted, explained = _fan_out(big, lambda b: FAIL if b.name.endswith(failing) else SUCCEED)

    assert len(submitted) == 4 * 3 + 1 and len(explained) == 1
    for event in submitted:
        assert set(event) == {"job", "item", "task_token"}
        assert not _keys(event) & REQUEST_ONLY_KEYS, sorted(_keys(event) & REQUEST_ONLY_KEYS)
        assert event["job"]["request_id"] == big.request_id and event["item"]["image"]
        assert _size(event) <= MAX_EVENT_BYTES, (_size(event), event["item"]["job_name"])
    (explain,) = explained
    assert set(explain) == {"action", "item", "error"} and explain["item"]["job_name"].endswith(failing)
    assert _size(explain) <= MAX_EVENT_BYTES

    # The iteration does not grow with the matrix: one suite and one run send events of the same size.
    small_submitted, _ = _fan_out(_matrix(DEFAULT_SUITES[:1], runs=1), lambda b: SUCCEED)
    small = {e["item"]["kind"]: _size(e) for e in small_submitted}
    first_eval = next(
        e for e in submitted if e["item"]["job_name"].endswith(f"{DEFAULT_SUITES[0].replace('_', '-')}-r0")
    )
    probe = next(e for e in submitted if e["item"]["kind"] == "probe")
    assert _size(first_eval) == small["eval"] and _size(probe) == small["probe"]
