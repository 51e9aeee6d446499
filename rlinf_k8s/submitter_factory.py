"""One string picks the compute backend, so configs and CLIs can say where Jobs run.

- ``local[:DIR]``: :class:`LocalExecutor` (default folder ``./.rlinf-bench/jobs``; ``?parallel=N`` sets the limit)
- ``kubeconfig[:PATH][#CONTEXT]``: any cluster from a kubeconfig (default path: ``$KUBECONFIG`` / ``~/.kube/config``)
- ``eks:CLUSTER[@REGION]``: EKS through IAM (DescribeCluster + STS token), with the default AWS credentials
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from rlinf_bench.errors import ConfigError
from rlinf_k8s.submitter import Submitter

__all__ = ["DEFAULT_LOCAL_DIR", "submitter_for"]

DEFAULT_LOCAL_DIR = Path(".rlinf-bench") / "jobs"
_FORMS = "local[:DIR][?parallel=N], kubeconfig[:PATH][#CONTEXT] or eks:CLUSTER[@REGION]"


def submitter_for(spec: str, *, boto_session: Any = None) -> Submitter:
    """The :class:`Submitter` named by ``spec`` (see the module docstring); clear error on anything else."""
    kind, _, rest = spec.strip().partition(":")
    if kind == "local":
        from rlinf_local.local_executor import LocalExecutor

        path, _, query = rest.partition("?")
        try:
            parallel = int(parse_qs(query).get("parallel", ["1"])[0])
        except ValueError as exc:
            raise ConfigError(f"compute {spec!r}: parallel must be an integer") from exc
        return LocalExecutor(Path(path) if path else DEFAULT_LOCAL_DIR, max_parallel=parallel)
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
