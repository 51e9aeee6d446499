"""deploy/k8s: what `kubectl apply -f deploy/k8s/` installs lets the Jobs run and nothing more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rlinf_bench.contracts import EvalRequest
from rlinf_k8s.jobs import jobs_for_request

REPO = Path(__file__).resolve().parents[3]

K8S = REPO / "deploy" / "k8s"


def documents() -> list[dict[str, Any]]:
    return [d for path in sorted(K8S.glob("*.yaml")) for d in yaml.safe_load_all(path.read_text()) if d]


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


@pytest.fixture(scope="module")
def pod_labels() -> dict[str, dict[str, str]]:
    """Pod template labels of every Job the example request renders, keyed by Job name."""
    request = EvalRequest.from_dict(
        yaml.safe_load((REPO / "deploy/tools/checkov-request.yaml").read_text()), source="checkov-request.yaml"
    )
    return {b.name: dict(b.job.spec.template.metadata.labels) for b in jobs_for_request(request)}


def test_given_kubectl_apply_f_then_every_yaml_file_is_a_kubernetes_object() -> None:
    # A kustomization.yaml here would make `kubectl apply -f deploy/k8s/` fail on kind Kustomization;
    # the kustomize file is named Kustomization, which -f skips and -k finds.
    assert not (K8S / "kustomization.yaml").exists()
    for doc in documents():
        assert doc["apiVersion"] and doc["kind"] != "Kustomization"
    listed = set(yaml.safe_load((K8S / "Kustomization").read_text())["resources"])
    assert listed == {p.name for p in K8S.glob("*.yaml")}


def test_given_the_network_policies_then_no_pod_accepts_connections_but_nccl_peers(
    pod_labels: dict[str, dict[str, str]],
) -> None:
    policies = [d for d in documents() if d["kind"] == "NetworkPolicy"]
    deny = [p for p in policies if p["spec"]["podSelector"] == {} and "ingress" not in p["spec"]]
    assert deny and deny[0]["spec"]["policyTypes"] == ["Ingress"]  # every pod, no ingress rule
    allows = [p for p in policies if p["spec"].get("ingress")]
    nccl = [name for name in pod_labels if name.endswith("-nccl")]
    assert nccl
    for name, labels in pod_labels.items():
        allowed_in = [p for p in allows if selects(p["spec"]["podSelector"], labels)]
        if name in nccl:
            # every port: NCCL's bootstrap and data sockets are ephemeral
            [policy] = allowed_in
            [rule] = policy["spec"]["ingress"]
            assert "ports" not in rule
            assert all(selects(peer["podSelector"], labels) for peer in rule["from"])
        else:
            assert allowed_in == [], f"{name} accepts connections"


def test_given_pod_identity_then_the_service_account_has_no_irsa_annotation() -> None:
    account = yaml.safe_load((K8S / "serviceaccount.yaml").read_text())
    # An IRSA annotation wins over Pod Identity in the SDKs' credential chain.
    assert "eks.amazonaws.com/role-arn" not in (account["metadata"].get("annotations") or {})
    assert account["automountServiceAccountToken"] is False


def test_given_the_failure_notifier_group_then_it_can_only_read() -> None:
    [reader] = [d for d in documents() if d["kind"] == "Role" and d["metadata"]["name"] == "rlinf-bench-reader"]
    verbs = {verb for rule in reader["rules"] for verb in rule["verbs"]}
    assert verbs == {"get", "list"}


def test_given_the_manifests_then_they_are_namespaced_in_the_jobs_namespace(tmp_path: Path) -> None:
    namespaced = [d for d in documents() if d["kind"] != "Namespace"]
    assert {d["metadata"]["namespace"] for d in namespaced} == {"rlinf-eval"}
    assert not [d for d in documents() if d["kind"].startswith("Cluster")]
