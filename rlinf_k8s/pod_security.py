"""Check a pod spec against the Pod Security Standards "restricted" profile (which includes "baseline").

The cluster's admission controller enforces these rules only when the namespace is labelled for it;
checking here means a manifest that would be refused (or that would run with more privilege than we
meant) is caught in a unit test and before any submission, on any cluster. The rules follow
https://kubernetes.io/docs/concepts/security/pod-security-standards/ (checked on plain manifest dicts,
so they apply equally to what we build and to YAML a user edited).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rlinf_bench.errors import JobSpecError

__all__ = ["PodSecurityViolation", "check_restricted", "pod_spec_of", "require_restricted"]

ALLOWED_VOLUME_TYPES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
ALLOWED_ADDED_CAPS = frozenset({"NET_BIND_SERVICE"})
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
ALLOWED_SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
ALLOWED_SECCOMP = frozenset({"RuntimeDefault", "Localhost"})
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class PodSecurityViolation:
    """One broken rule: where (a field path) and what."""

    path: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}: {self.rule}"


def pod_spec_of(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod spec inside a Pod, Job, or CronJob manifest."""
    kind = manifest.get("kind")
    spec = manifest.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "Job":
        return (spec.get("template") or {}).get("spec") or {}
    if kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec") or {}
        return (job.get("template") or {}).get("spec") or {}
    raise JobSpecError(f"cannot check Pod Security of a {kind!r} manifest: only Pod, Job and CronJob carry pods")


def _containers(pod: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for key in _CONTAINER_LISTS:
        for i, c in enumerate(pod.get(key) or []):
            yield f"spec.{key}[{i}]", c


def _host_checks(pod: Mapping[str, Any]) -> Iterator[PodSecurityViolation]:
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            yield PodSecurityViolation(f"spec.{key}", f"{key} must be unset or false")
    for i, vol in enumerate(pod.get("volumes") or []):
        types = set(vol) - {"name"}
        bad = types - ALLOWED_VOLUME_TYPES
        if bad:
            yield PodSecurityViolation(
                f"spec.volumes[{i}]", f"volume type {sorted(bad)} not allowed (allowed: {sorted(ALLOWED_VOLUME_TYPES)})"
            )
    psc = pod.get("securityContext") or {}
    for i, sysctl in enumerate(psc.get("sysctls") or []):
        if sysctl.get("name") not in SAFE_SYSCTLS:
            yield PodSecurityViolation(f"spec.securityContext.sysctls[{i}]", f"sysctl {sysctl.get('name')!r} is unsafe")


def _context_checks(path: str, sc: Mapping[str, Any]) -> Iterator[PodSecurityViolation]:
    """Rules that apply to the pod-level and to each container-level security context alike."""
    if sc.get("runAsUser") == 0:
        yield PodSecurityViolation(f"{path}.runAsUser", "must not be 0 (root)")
    if sc.get("runAsNonRoot") is False:
        yield PodSecurityViolation(f"{path}.runAsNonRoot", "must not be false")
    seccomp = (sc.get("seccompProfile") or {}).get("type")
    if seccomp is not None and seccomp not in ALLOWED_SECCOMP:
        yield PodSecurityViolation(f"{path}.seccompProfile.type", f"{seccomp!r} not allowed (use RuntimeDefault)")
    selinux = (sc.get("seLinuxOptions") or {}).get("type", "")
    if selinux not in ALLOWED_SELINUX_TYPES:
        yield PodSecurityViolation(f"{path}.seLinuxOptions.type", f"{selinux!r} not allowed")
    for key in ("user", "role"):
        if (sc.get("seLinuxOptions") or {}).get(key):
            yield PodSecurityViolation(f"{path}.seLinuxOptions.{key}", "must not be set")
    apparmor = (sc.get("appArmorProfile") or {}).get("type")
    if apparmor not in (None, "RuntimeDefault", "Localhost"):
        yield PodSecurityViolation(f"{path}.appArmorProfile.type", f"{apparmor!r} not allowed")


def _container_checks(
    path: str, c: Mapping[str, Any], pod_non_root: bool, pod_seccomp: bool
) -> Iterator[PodSecurityViolation]:
    sc = c.get("securityContext") or {}
    yield from _context_checks(f"{path}.securityContext", sc)
    if sc.get("privileged"):
        yield PodSecurityViolation(f"{path}.securityContext.privileged", "must be unset or false")
    if sc.get("allowPrivilegeEscalation") is not False:
        yield PodSecurityViolation(f"{path}.securityContext.allowPrivilegeEscalation", "must be set to false")
    caps = sc.get("capabilities") or {}
    if "ALL" not in (caps.get("drop") or []):
        yield PodSecurityViolation(f"{path}.securityContext.capabilities.drop", "must include ALL")
    added = set(caps.get("add") or []) - ALLOWED_ADDED_CAPS
    if added:
        yield PodSecurityViolation(f"{path}.securityContext.capabilities.add", f"{sorted(added)} not allowed")
    if not (sc.get("runAsNonRoot") is True or (pod_non_root and "runAsNonRoot" not in sc)):
        yield PodSecurityViolation(f"{path}.securityContext.runAsNonRoot", "must be true (here or on the pod)")
    if not (
        (sc.get("seccompProfile") or {}).get("type") in ALLOWED_SECCOMP or (pod_seccomp and "seccompProfile" not in sc)
    ):
        yield PodSecurityViolation(
            f"{path}.securityContext.seccompProfile", "must be RuntimeDefault (here or on the pod)"
        )
    if sc.get("procMount") not in (None, "Default"):
        yield PodSecurityViolation(f"{path}.securityContext.procMount", "must be Default")
    for j, port in enumerate(c.get("ports") or []):
        if port.get("hostPort"):
            yield PodSecurityViolation(f"{path}.ports[{j}].hostPort", "host ports are not allowed")


def check_restricted(pod: Mapping[str, Any]) -> list[PodSecurityViolation]:
    """Every "restricted" rule that ``pod`` (a pod spec dict, camelCase) breaks; empty when compliant."""
    out = list(_host_checks(pod))
    psc = pod.get("securityContext") or {}
    out += _context_checks("spec.securityContext", psc)
    pod_non_root = psc.get("runAsNonRoot") is True
    pod_seccomp = (psc.get("seccompProfile") or {}).get("type") in ALLOWED_SECCOMP
    for path, c in _containers(pod):
        out += _container_checks(path, c, pod_non_root, pod_seccomp)
    return out


def require_restricted(manifest: Mapping[str, Any]) -> None:
    """Raise :class:`JobSpecError` listing every violation when ``manifest``'s pods are not "restricted"."""
    violations = check_restricted(pod_spec_of(manifest))
    if violations:
        name = (manifest.get("metadata") or {}).get("name", "?")
        lines = "\n".join(f"  - {v}" for v in violations)
        raise JobSpecError(f"{manifest.get('kind')} {name} breaks the Pod Security 'restricted' profile:\n{lines}")
