"""The restricted-profile checker catches each kind of violation (and passes our own pods)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from rlinf_bench.errors import JobSpecError
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.pod_security import check_restricted, require_restricted
from tests.unit.k8s.conftest import make_request


def _job() -> dict[str, Any]:
    return jobs_for_request(make_request(probes=[]))[0].manifests()[0]


def _c(job: dict[str, Any]) -> dict[str, Any]:
    c: dict[str, Any] = job["spec"]["template"]["spec"]["containers"][0]
    return c


def _pod(job: dict[str, Any]) -> dict[str, Any]:
    p: dict[str, Any] = job["spec"]["template"]["spec"]
    return p


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "privileged": (lambda j: _c(j)["securityContext"].update(privileged=True), "privileged"),
    "escalation allowed": (
        lambda j: _c(j)["securityContext"].update(allowPrivilegeEscalation=True),
        "allowPrivilegeEscalation",
    ),
    "escalation unset": (
        lambda j: _c(j)["securityContext"].pop("allowPrivilegeEscalation"),
        "allowPrivilegeEscalation",
    ),
    "caps not dropped": (lambda j: _c(j)["securityContext"].pop("capabilities"), "capabilities.drop"),
    "cap added": (
        lambda j: _c(j)["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
        "capabilities.add",
    ),
    "root user": (lambda j: _pod(j)["securityContext"].update(runAsUser=0), "runAsUser"),
    "non-root unset": (
        lambda j: (_pod(j)["securityContext"].pop("runAsNonRoot"), _c(j)["securityContext"].pop("runAsNonRoot")),
        "runAsNonRoot",
    ),
    "seccomp unconfined": (
        lambda j: _c(j)["securityContext"].update(seccompProfile={"type": "Unconfined"}),
        "seccompProfile",
    ),
    "seccomp unset": (
        lambda j: (_pod(j)["securityContext"].pop("seccompProfile"), _c(j)["securityContext"].pop("seccompProfile")),
        "seccompProfile",
    ),
    "host network": (lambda j: _pod(j).update(hostNetwork=True), "hostNetwork"),
    "host ipc": (lambda j: _pod(j).update(hostIPC=True), "hostIPC"),
    "hostPath volume": (
        lambda j: _pod(j)["volumes"].append({"name": "h", "hostPath": {"path": "/dev"}}),
        "hostPath",
    ),
    "host port": (lambda j: _c(j).update(ports=[{"containerPort": 80, "hostPort": 80}]), "hostPort"),
    "unsafe sysctl": (
        lambda j: _pod(j)["securityContext"].update(sysctls=[{"name": "kernel.msgmax", "value": "1"}]),
        "sysctl",
    ),
    "init container unconfined": (
        lambda j: _pod(j).update(initContainers=[{"name": "init", "image": "x"}]),
        "initContainers[0]",
    ),
}


def test_given_our_eval_job_then_no_violation() -> None:
    assert check_restricted(_pod(_job())) == []


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_given_a_pod_breaking_one_rule_then_the_checker_names_it(case: str) -> None:
    job = copy.deepcopy(_job())
    mutate, fragment = MUTATIONS[case]
    mutate(job)

    violations = check_restricted(_pod(job))

    assert violations, case
    assert any(fragment in str(v) for v in violations), [str(v) for v in violations]


def test_given_a_violating_job_when_required_then_the_error_lists_every_violation() -> None:
    job = copy.deepcopy(_job())
    _c(job)["securityContext"].update(privileged=True)
    _pod(job).update(hostPID=True)

    with pytest.raises(JobSpecError) as info:
        require_restricted(job)

    assert "privileged" in str(info.value) and "hostPID" in str(info.value)


def test_given_a_manifest_without_pods_then_a_clear_error() -> None:
    with pytest.raises(JobSpecError, match="only Pod, Job and CronJob"):
        require_restricted({"kind": "Service", "spec": {}})
