"""deploy/k8s/kueue: the Kueue objects are valid v1beta1, and evaluation borrows idle GPUs but is preempted first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from rlinf_bench.contracts import JobSettings
from tests.unit.deploy.kueue_api import KINDS, ClusterQueue, LocalQueue, ResourceFlavor, WorkloadPriorityClass

REPO = Path(__file__).resolve().parents[3]
KUEUE = REPO / "deploy" / "k8s" / "kueue"


def objects() -> list[Any]:
    docs = [d for p in sorted(KUEUE.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    return [KINDS[d["kind"]].model_validate(d) for d in docs]


def of(kind: type[Any]) -> dict[str, Any]:
    return {o.metadata.name: o for o in objects() if isinstance(o, kind)}


def test_given_the_kueue_manifests_then_each_is_a_valid_v1beta1_object_listed_in_the_kustomization() -> None:
    assert {type(o) for o in objects()} == {ResourceFlavor, ClusterQueue, LocalQueue, WorkloadPriorityClass}
    listed = set(yaml.safe_load((KUEUE / "Kustomization").read_text())["resources"])
    assert listed == {p.name for p in KUEUE.glob("*.yaml")}


def test_given_a_misspelt_field_then_the_types_refuse_it() -> None:
    doc = yaml.safe_load((KUEUE / "localqueue.yaml").read_text())
    doc["spec"]["clusterQueues"] = doc["spec"].pop("clusterQueue")
    with pytest.raises(ValidationError, match="clusterQueue"):
        LocalQueue.model_validate(doc)


def test_given_the_cohort_then_evaluation_borrows_and_training_reclaims_first() -> None:
    queues = of(ClusterQueue)
    ev, train = queues["rlinf-eval"].spec, queues["training"].spec
    assert ev.cohort == train.cohort
    quotas = {r.name: r for r in ev.resource_groups[0].flavors[0].resources}
    assert set(quotas) == {"cpu", "memory", "nvidia.com/gpu"}
    assert quotas["nvidia.com/gpu"].borrowing_limit is not None  # borrows idle training GPUs, bounded
    assert ev.preemption is not None and ev.preemption.reclaim_within_cohort == "Never"
    assert train.preemption is not None and train.preemption.reclaim_within_cohort == "Any"
    assert ev.preemption.within_cluster_queue == "LowerPriority"


def test_given_the_priority_classes_then_evaluation_is_below_training() -> None:
    classes = of(WorkloadPriorityClass)
    assert classes["rlinf-eval-low"].value < classes["training-high"].value


def test_given_the_local_queue_then_it_feeds_the_eval_cluster_queue_in_the_jobs_namespace() -> None:
    [local] = of(LocalQueue).values()
    assert local.metadata.namespace == JobSettings().namespace
    assert local.spec.cluster_queue in of(ClusterQueue)
    [flavor] = of(ResourceFlavor).values()
    assert flavor.spec.node_labels == JobSettings().node_selector  # the nodes the Jobs select
