"""Names that become Kubernetes names, labels, quantities or env names are matched in full: a trailing
newline (which a `^...$` pattern with re.match accepts) is refused before a Job is built."""

from __future__ import annotations

from typing import Any

import pytest

from rlinf_bench.contracts import JobSettings
from rlinf_bench.errors import JobSpecError
from rlinf_k8s import jobs
from rlinf_k8s.dns_names import validate_dns1123_subdomain, validate_env_name, validate_label_key
from tests.unit.k8s.conftest import make_request


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"kubernetes": JobSettings(namespace="rlinf-eval\n")}, "kubernetes.namespace"),
        ({"kubernetes": JobSettings(service_account="rlinf-bench-runner\n")}, "kubernetes.service_account"),
        ({"kubernetes": JobSettings(node_selector={"role": "gpu-training\n"})}, "node_selector"),
        ({"kubernetes": JobSettings(node_selector={"role\n": "gpu-training"})}, "node_selector"),
        ({"kubernetes": JobSettings(shm_size="16Gi\n")}, "kubernetes.shm_size"),
        ({"kubernetes": JobSettings(env={"HF_HOME\n": "/cache"})}, "environment variable name"),
    ],
)
def test_a_trailing_newline_in_a_name_is_refused_naming_the_field(change: dict[str, Any], field: str) -> None:
    request = make_request(**change)
    with pytest.raises(JobSpecError) as info:
        jobs.jobs_for_request(request)
    assert field in str(info.value)


@pytest.mark.parametrize(
    "check",
    [
        lambda: validate_dns1123_subdomain("fsx-claim\n", field="kubernetes.checkpoint_pvc"),
        lambda: validate_label_key("example.com\n/role", field="labels"),
        lambda: validate_env_name("A\n", field="env"),
    ],
)
def test_each_validator_refuses_a_trailing_newline(check: Any) -> None:
    with pytest.raises(JobSpecError):
        check()
