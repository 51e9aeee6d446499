"""Kueue v1beta1's objects that deploy/k8s/kueue uses, as pydantic models written from its API types.

From kubernetes-sigs/kueue apis/kueue/v1beta1 (clusterqueue_types.go, localqueue_types.go,
resourceflavor_types.go, workloadpriorityclass_types.go) and the API reference; every model forbids
unknown fields, so a misspelt or invented field fails the test as the API server would refuse it
(no PyPI or npm package ships Kueue's CRD schemas). Only the fields the API documents are here.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

# Object names: DNS-1123 subdomain (the kubebuilder pattern on the references), fullmatch only.
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUANTITY = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?")


def _name(value: str) -> str:
    if len(value) > 253 or not _SUBDOMAIN.fullmatch(value):
        raise ValueError(f"{value!r} is not a DNS-1123 subdomain")
    return value


def _quantity(value: str | int) -> str | int:
    if isinstance(value, str) and not _QUANTITY.fullmatch(value):
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    return value


Name = Annotated[str, AfterValidator(_name)]
Quantity = Annotated[str | int, AfterValidator(_quantity)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")  # by the API's camelCase names only


class ObjectMeta(_Strict):
    name: Name
    namespace: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class LabelSelectorRequirement(_Strict):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = Field(default_factory=list)


class LabelSelector(_Strict):
    match_labels: dict[str, str] = Field(default_factory=dict, alias="matchLabels")
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list, alias="matchExpressions")


class Toleration(_Strict):
    key: str | None = None
    operator: Literal["Exists", "Equal"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = Field(default=None, alias="tolerationSeconds")


class Taint(_Strict):
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class _Object(_Strict):
    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")
    metadata: ObjectMeta


class ResourceFlavorSpec(_Strict):
    node_labels: dict[str, str] = Field(default_factory=dict, alias="nodeLabels", max_length=8)
    node_taints: list[Taint] = Field(default_factory=list, alias="nodeTaints", max_length=8)
    tolerations: list[Toleration] = Field(default_factory=list, max_length=8)
    topology_name: str | None = Field(default=None, alias="topologyName")


class ResourceFlavor(_Object):
    kind: Literal["ResourceFlavor"]
    spec: ResourceFlavorSpec = Field(default_factory=ResourceFlavorSpec)


class ResourceQuota(_Strict):
    name: str
    nominal_quota: Quantity = Field(alias="nominalQuota")
    borrowing_limit: Quantity | None = Field(default=None, alias="borrowingLimit")
    lending_limit: Quantity | None = Field(default=None, alias="lendingLimit")


class FlavorQuotas(_Strict):
    name: Name
    resources: list[ResourceQuota] = Field(min_length=1, max_length=64)


class ResourceGroup(_Strict):
    covered_resources: list[str] = Field(alias="coveredResources", min_length=1, max_length=64)
    flavors: list[FlavorQuotas] = Field(min_length=1, max_length=64)


class FlavorFungibility(_Strict):
    when_can_borrow: Literal["Borrow", "TryNextFlavor", "MayStopSearch"] | None = Field(
        default=None, alias="whenCanBorrow"
    )
    when_can_preempt: Literal["Preempt", "TryNextFlavor", "MayStopSearch"] | None = Field(
        default=None, alias="whenCanPreempt"
    )


class BorrowWithinCohort(_Strict):
    policy: Literal["Never", "LowerPriority"] = "Never"
    max_priority_threshold: int | None = Field(default=None, alias="maxPriorityThreshold")


class ClusterQueuePreemption(_Strict):
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = Field(
        default="Never", alias="reclaimWithinCohort"
    )
    borrow_within_cohort: BorrowWithinCohort | None = Field(default=None, alias="borrowWithinCohort")
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = Field(
        default="Never", alias="withinClusterQueue"
    )


class FairSharing(_Strict):
    weight: Quantity | None = None


class ClusterQueueSpec(_Strict):
    resource_groups: list[ResourceGroup] = Field(default_factory=list, alias="resourceGroups", max_length=16)
    cohort: Name | None = None
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] = Field(
        default="BestEffortFIFO", alias="queueingStrategy"
    )
    namespace_selector: LabelSelector | None = Field(default=None, alias="namespaceSelector")
    flavor_fungibility: FlavorFungibility | None = Field(default=None, alias="flavorFungibility")
    preemption: ClusterQueuePreemption | None = None
    admission_checks: list[str] = Field(default_factory=list, alias="admissionChecks")
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] | None = Field(default=None, alias="stopPolicy")
    fair_sharing: FairSharing | None = Field(default=None, alias="fairSharing")


class ClusterQueue(_Object):
    kind: Literal["ClusterQueue"]
    spec: ClusterQueueSpec


class LocalQueueSpec(_Strict):
    cluster_queue: Name = Field(alias="clusterQueue")
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] | None = Field(default=None, alias="stopPolicy")
    fair_sharing: FairSharing | None = Field(default=None, alias="fairSharing")


class LocalQueue(_Object):
    kind: Literal["LocalQueue"]
    spec: LocalQueueSpec


class WorkloadPriorityClass(_Object):
    kind: Literal["WorkloadPriorityClass"]
    value: int = Field(ge=-(2**31), lt=2**31)
    description: str | None = None


KueueObject = ResourceFlavor | ClusterQueue | LocalQueue | WorkloadPriorityClass
KINDS: dict[str, type[_Object]] = {
    "ResourceFlavor": ResourceFlavor,
    "ClusterQueue": ClusterQueue,
    "LocalQueue": LocalQueue,
    "WorkloadPriorityClass": WorkloadPriorityClass,
}
