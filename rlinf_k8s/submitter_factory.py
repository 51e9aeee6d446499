"""One string picks the compute backend, so configs and CLIs can say where Jobs run.

- ``kubeconfig[:PATH][#CONTEXT]``: any cluster from a kubeconfig (default path: ``$KUBECONFIG`` / ``~/.kube/config``)
- ``eks:CLUSTER[@REGION]``: EKS through IAM (DescribeCluster + STS token), with the default AWS credentials
- ``local[:DIR][?parallel=N]``: Jobs as subprocesses of this machine. That backend is the embedded default's
  (``rlinf_local.local_executor``), which passes its builder in as ``local``: this package knows clusters only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlinf_bench.errors import ConfigError
from rlinf_k8s.submitter import Submitter

__all__ = ["LocalBackend", "submitter_for"]

#: Builds the Submitter of ``local[:DIR][?parallel=N]`` from what follows ``local:`` (the embedded default's).
LocalBackend = Callable[[str], Submitter]
_FORMS = "kubeconfig[:PATH][#CONTEXT], eks:CLUSTER[@REGION] or local[:DIR][?parallel=N]"


def submitter_for(spec: str, *, boto_session: Any = None, local: LocalBackend | None = None) -> Submitter:
    """The :class:`Submitter` named by ``spec`` (see the module docstring); clear error on anything else."""
    kind, _, rest = spec.strip().partition(":")
    if kind == "local":
        if local is None:
            raise ConfigError(
                f"compute {spec!r}: local Jobs run in the embedded default (rlinf-bench pipeline, demo), which "
                "brings its own executor; here name a cluster: kubeconfig[:PATH][#CONTEXT] or eks:CLUSTER[@REGION]"
            )
        return local(rest)
    if kind == "kubeconfig":
        from rlinf_k8s.api_client import api_client_from_kubeconfig
        from rlinf_k8s.kubernetes_backend import KubernetesSubmitter

        path, _, context = rest.partition("#")
        return KubernetesSubmitter(api_client_from_kubeconfig(path or None, context=context or None))
    if kind == "eks":
        cluster, _, region = rest.partition("@")
        if not cluster:
            raise ConfigError(f"compute {spec!r} names no cluster; use eks:CLUSTER[@REGION]")
        import boto3

        from rlinf_k8s.api_client import api_client_for_eks
        from rlinf_k8s.kubernetes_backend import KubernetesSubmitter

        session = boto_session or boto3.session.Session()
        region_name = region or session.region_name
        if not region_name:
            raise ConfigError(f"compute {spec!r}: no AWS region; use eks:{cluster}@REGION or set AWS_REGION")
        eks = session.client("eks", region_name=region_name)
        sts = session.client("sts", region_name=region_name)
        return KubernetesSubmitter(api_client_for_eks(eks, sts, cluster))
    raise ConfigError(f"unknown compute backend {spec!r}; use {_FORMS}")
