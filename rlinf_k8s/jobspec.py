"""Typed builders for ``batch/v1`` Jobs (and the headless Service of an Indexed Job).

Each builder is a small keyword-only dataclass that validates itself in ``__post_init__`` and returns
official ``kubernetes`` client models from ``build()``; YAML is only ever produced by serializing those
models, never by templating text. Every value a user controls ends up as one element of an argv array
(never inside a shell string) and has ``$`` escaped as ``$$`` so Kubernetes' own ``$(VAR)`` expansion
in ``command``/``args`` cannot rewrite it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kubernetes import client as k8s

from rlinf_bench.contracts import JobSettings, KueueSettings
from rlinf_bench.errors import JobSpecError
from rlinf_k8s.dns_names import (
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_env_name,
    validate_label_key,
    validate_labels,
)

__all__ = [
    "FIELD_REF_ENV",
    "IMAGE_DIGEST_ENV",
    "KUEUE_PRIORITY_LABEL",
    "KUEUE_QUEUE_LABEL",
    "QUEUE_LIMIT_ANNOTATION",
    "RDZV_PORT",
    "ContainerResources",
    "JobSpec",
    "escape_var_refs",
    "to_manifest",
]

RDZV_PORT = 29500
# Kueue's own labels: the LocalQueue a suspended Job waits in, and its WorkloadPriorityClass.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# How long the queue sentinel keeps a not-yet-started Job alive (rlinf_k8s.queue_sentinel).
QUEUE_LIMIT_ANNOTATION = "rlinf-bench/queue-limit-min"
# Read by rlinf_bench.provenance.collect_provenance (Provenance.image_digest).
IMAGE_DIGEST_ENV = "IMAGE_DIGEST"
# Values the downward API fills in; the local executor resolves the same field paths.
FIELD_REF_ENV: dict[str, str] = {"POD_NAME": "metadata.name", "NODE_NAME": "spec.nodeName"}
# Kubernetes resource quantities: a number with an optional binary/decimal suffix (e.g. 500m, 64Gi, 1e3).
# fullmatch only: `$` with match() accepts a trailing newline ("16Gi\n").
_QUANTITY = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?\d+)?")


def escape_var_refs(value: str) -> str:
    """Escape ``$`` so Kubernetes passes ``value`` through its ``$(VAR)`` expansion unchanged."""
    return value.replace("$", "$$")


def _check_quantity(value: str, *, field: str) -> str:
    if not isinstance(value, str) or not _QUANTITY.fullmatch(value):
        raise JobSpecError(
            f"{field}={value!r} is not a Kubernetes quantity; use e.g. '8', '500m' for CPU or '64Gi' for memory"
        )
    return value


@dataclass(kw_only=True)
class ContainerResources:
    """Requests and limits of one container; GPUs go in both, under a configurable resource key."""

    cpu: str
    memory: str
    gpu: int = 0
    gpu_key: str = "nvidia.com/gpu"

    def __post_init__(self) -> None:
        _check_quantity(self.cpu, field="resources.cpu")
        _check_quantity(self.memory, field="resources.memory")
        if self.gpu < 0:
            raise JobSpecError(f"resources.gpu={self.gpu} is negative; use 0 for a CPU-only Job")
        validate_label_key(self.gpu_key, field="resources.gpu_resource_key")

    def build(self) -> k8s.V1ResourceRequirements:
        """Requests = limits: the Job gets a Guaranteed QoS class, so it is the last to be evicted."""
        amounts: dict[str, str] = {"cpu": self.cpu, "memory": self.memory}
        if self.gpu:
            # Extended resources (GPUs) cannot be overcommitted: Kubernetes requires requests == limits.
            amounts[self.gpu_key] = str(self.gpu)
        return k8s.V1ResourceRequirements(requests=dict(amounts), limits=dict(amounts))


def _restricted_container_context(uid: int) -> k8s.V1SecurityContext:
    # Pod Security "restricted": GPUs need no exception with the NVIDIA device plugin, which injects
    # the device nodes and driver libraries without privileges or extra capabilities.
    return k8s.V1SecurityContext(
        allow_privilege_escalation=False,
        capabilities=k8s.V1Capabilities(drop=["ALL"]),
        run_as_non_root=True,
        run_as_user=uid,
        run_as_group=uid,
        seccomp_profile=k8s.V1SeccompProfile(type="RuntimeDefault"),
    )


@dataclass(kw_only=True)
class JobSpec:
    """One Job: a single container, the brief's scheduling, volumes, security context and lifecycle."""

    name: str
    namespace: str
    image: str
    command: Sequence[str]
    resources: ContainerResources
    settings: JobSettings
    deadline_s: int
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    container_name: Literal["eval", "probe"] = "eval"
    completions: int = 1
    headless_service: bool = False
    checkpoint_read_only: bool = True
    fail_fast_exit_codes: tuple[int, ...] = ()
    kueue: KueueSettings | None = None

    def __post_init__(self) -> None:
        validate_dns1123_label(self.name, field="job name")
        validate_dns1123_label(self.namespace, field="kubernetes.namespace")
        if not self.image.strip():
            raise JobSpecError(
                f"no container image for Job {self.name}: set `image` (eval) or `probe_image` (probes) in the request"
            )
        if any(c.isspace() for c in self.image):
            raise JobSpecError(f"image {self.image!r} contains whitespace; give one image reference")
        if not self.command or any(not isinstance(part, str) for part in self.command):
            raise JobSpecError(f"Job {self.name}: the command must be a non-empty list of strings")
        validate_labels(self.labels, field="labels")
        for key in self.annotations:
            validate_label_key(key, field="annotations")
        for name in self.env:
            validate_env_name(name, field=f"env of Job {self.name}")
        s = self.settings
        validate_dns1123_subdomain(s.service_account, field="kubernetes.service_account")
        validate_labels(s.node_selector, field="kubernetes.node_selector")
        for pvc, what in ((s.checkpoint_pvc, "checkpoint_pvc"), (s.results_pvc, "results_pvc")):
            if pvc:
                validate_dns1123_subdomain(pvc, field=f"kubernetes.{what}")
        if s.priority_class:
            validate_dns1123_subdomain(s.priority_class, field="kubernetes.priority_class")
        _check_quantity(s.shm_size, field="kubernetes.shm_size")
        for path, what in (
            (s.checkpoint_mount_path, "checkpoint_mount_path"),
            (s.results_mount_path, "results_mount_path"),
        ):
            if not path.startswith("/") or path in ("/", "/dev/shm"):
                raise JobSpecError(f"kubernetes.{what}={path!r} must be an absolute path other than / and /dev/shm")
        if self.completions < 1:
            raise JobSpecError(f"Job {self.name}: completions must be >= 1")
        if any(code <= 0 or code > 255 for code in self.fail_fast_exit_codes):
            raise JobSpecError(f"Job {self.name}: fail-fast exit codes must be in 1..255")
        if self.headless_service and self.completions < 2:
            raise JobSpecError(f"Job {self.name}: a rendezvous Service only makes sense for an Indexed Job")

    @property
    def indexed(self) -> bool:
        return self.completions > 1

    def _volumes(self) -> tuple[list[k8s.V1Volume], list[k8s.V1VolumeMount]]:
        s = self.settings
        volumes = [
            # /dev/shm defaults to 64 MiB in a container; PyTorch workers and NCCL need far more.
            k8s.V1Volume(name="dshm", empty_dir=k8s.V1EmptyDirVolumeSource(medium="Memory", size_limit=s.shm_size)),
        ]
        mounts = [k8s.V1VolumeMount(name="dshm", mount_path="/dev/shm")]
        if s.checkpoint_pvc:
            # Read-only twice (claim and mount): an evaluation must never be able to alter a checkpoint.
            # Only the storage and checkpoint_io probes write (they measure the file system by writing to it).
            ro = self.checkpoint_read_only
            volumes.append(
                k8s.V1Volume(
                    name="checkpoints",
                    persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(
                        claim_name=s.checkpoint_pvc, read_only=ro
                    ),
                )
            )
            mounts.append(k8s.V1VolumeMount(name="checkpoints", mount_path=s.checkpoint_mount_path, read_only=ro))
        if s.results_pvc:
            results = k8s.V1Volume(
                name="results",
                persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(claim_name=s.results_pvc),
            )
        else:
            results = k8s.V1Volume(name="results", empty_dir=k8s.V1EmptyDirVolumeSource())
        volumes.append(results)
        mounts.append(k8s.V1VolumeMount(name="results", mount_path=s.results_mount_path))
        return volumes, mounts

    def _env(self) -> list[k8s.V1EnvVar]:
        env = dict(self.env)
        if "@" in self.image:
            # An image pinned by digest: the container cannot see its own digest, so the Job tells it, and
            # collect_provenance() records it as image_digest in every RunResult/ProbeResult.
            env.setdefault(IMAGE_DIGEST_ENV, self.image.rsplit("@", 1)[1])
        out = [k8s.V1EnvVar(name=k, value=v) for k, v in env.items()]
        out += [
            k8s.V1EnvVar(name=name, value_from=k8s.V1EnvVarSource(field_ref=k8s.V1ObjectFieldSelector(field_path=path)))
            for name, path in FIELD_REF_ENV.items()
            if name not in env
        ]
        return out

    def build_pod_spec(self) -> k8s.V1PodSpec:
        """The pod template's spec (public so that the security checks can be run on it directly)."""
        s = self.settings
        volumes, mounts = self._volumes()
        container = k8s.V1Container(
            name=self.container_name,
            image=self.image,
            image_pull_policy=s.image_pull_policy,
            command=list(self.command),
            env=self._env(),
            resources=self.resources.build(),
            volume_mounts=mounts,
            security_context=_restricted_container_context(s.run_as_user),
            ports=[k8s.V1ContainerPort(name="rdzv", container_port=RDZV_PORT)] if self.headless_service else None,
        )
        return k8s.V1PodSpec(
            restart_policy="Never",
            service_account_name=s.service_account,
            # The pods never call the Kubernetes API; IRSA / Pod Identity mount their own AWS token.
            automount_service_account_token=False,
            node_selector=dict(s.node_selector) or None,
            tolerations=[
                k8s.V1Toleration(key=t.key, operator=t.operator, value=t.value, effect=t.effect) for t in s.tolerations
            ]
            or None,
            priority_class_name=s.priority_class or None,
            security_context=k8s.V1PodSecurityContext(
                run_as_non_root=True,
                run_as_user=s.run_as_user,
                run_as_group=s.run_as_user,
                fs_group=s.run_as_user,
                seccomp_profile=k8s.V1SeccompProfile(type="RuntimeDefault"),
            ),
            # The Indexed Job's pods get stable DNS names <job>-<index>.<service> for torchrun.
            subdomain=self.name if self.headless_service else None,
            containers=[container],
            volumes=volumes,
        )

    def _pod_failure_policy(self) -> k8s.V1PodFailurePolicy:
        rules = [
            # A node drained, preempted or evicted the pod: not the command's fault, so it does not
            # count against backoffLimit (the replacement pod runs the same command).
            k8s.V1PodFailurePolicyRule(
                action="Ignore",
                on_pod_conditions=[
                    k8s.V1PodFailurePolicyOnPodConditionsPattern(type="DisruptionTarget", status="True")
                ],
            )
        ]
        if self.fail_fast_exit_codes:
            # Exit codes that a retry cannot change (bad input, a measured verdict): fail now.
            rules.insert(
                0,
                k8s.V1PodFailurePolicyRule(
                    action="FailJob",
                    on_exit_codes=k8s.V1PodFailurePolicyOnExitCodesRequirement(
                        container_name=self.container_name,
                        operator="In",
                        values=sorted(set(self.fail_fast_exit_codes)),
                    ),
                ),
            )
        return k8s.V1PodFailurePolicy(rules=rules)

    def build(self) -> k8s.V1Job:
        """The ``batch/v1`` Job."""
        s = self.settings
        labels, annotations = dict(self.labels), dict(self.annotations)
        if self.kueue is not None:
            # Kueue reads these from the Job itself (not the pod template) and unsuspends it on admission.
            labels[KUEUE_QUEUE_LABEL] = self.kueue.queue
            if self.kueue.priority_class:
                labels[KUEUE_PRIORITY_LABEL] = self.kueue.priority_class
            annotations[QUEUE_LIMIT_ANNOTATION] = str(self.kueue.queue_limit_min)
        meta = k8s.V1ObjectMeta(
            name=self.name, namespace=self.namespace, labels=labels, annotations=annotations or None
        )
        return k8s.V1Job(
            api_version="batch/v1",
            kind="Job",
            metadata=meta,
            spec=k8s.V1JobSpec(
                # Created suspended: Kueue admits it (within quota, by priority) by setting suspend to false.
                suspend=True if self.kueue is not None else None,
                backoff_limit=s.backoff_limit,
                active_deadline_seconds=self.deadline_s,
                ttl_seconds_after_finished=s.ttl_after_finished_s,
                completions=self.completions if self.indexed else None,
                parallelism=self.completions if self.indexed else None,
                completion_mode="Indexed" if self.indexed else None,
                pod_failure_policy=self._pod_failure_policy(),
                template=k8s.V1PodTemplateSpec(
                    metadata=k8s.V1ObjectMeta(labels=dict(self.labels), annotations=dict(self.annotations) or None),
                    spec=self.build_pod_spec(),
                ),
            ),
        )

    def build_service(self) -> k8s.V1Service | None:
        """The headless Service that gives an Indexed Job's pods DNS names; None for a plain Job."""
        if not self.headless_service:
            return None
        return k8s.V1Service(
            api_version="v1",
            kind="Service",
            metadata=k8s.V1ObjectMeta(name=self.name, namespace=self.namespace, labels=dict(self.labels)),
            spec=k8s.V1ServiceSpec(
                cluster_ip="None",
                # Rank 0 must resolve before it is "ready": the other ranks connect while it starts up.
                publish_not_ready_addresses=True,
                selector={"batch.kubernetes.io/job-name": self.name},
                ports=[k8s.V1ServicePort(name="rdzv", port=RDZV_PORT, target_port=RDZV_PORT)],
            ),
        )


def to_manifest(obj: Any) -> dict[str, Any]:
    """A client model as the plain camelCase dict Kubernetes reads (None fields dropped)."""
    # sanitize_for_serialization is the client's own model -> JSON mapping; it needs no connection.
    result: dict[str, Any] = k8s.ApiClient().sanitize_for_serialization(obj)
    return result
