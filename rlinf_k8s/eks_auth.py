"""EKS access without kubectl or aws-iam-authenticator: a bearer token and the cluster's endpoint.

The token is what ``aws eks get-token`` prints: ``k8s-aws-v1.`` followed by the URL-safe base64 (no
padding) of a presigned STS ``GetCallerIdentity`` URL. The URL's signature covers the header
``x-k8s-aws-id: <cluster>``, so the token is only good for that cluster; EKS accepts it for about
15 minutes whatever ``X-Amz-Expires`` says, and we presign for 60 s as the authenticator expects.
Endpoint and CA come from ``eks:DescribeCluster``. Clients are injected, so tests use moto.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlinf_bench.errors import ConfigError, KubernetesError

__all__ = [
    "CLUSTER_ID_HEADER",
    "TOKEN_LIFETIME_S",
    "TOKEN_PREFIX",
    "ClusterEndpoint",
    "EksToken",
    "EksTokenProvider",
    "describe_cluster",
    "make_token",
]

TOKEN_PREFIX = "k8s-aws-v1."
CLUSTER_ID_HEADER = "x-k8s-aws-id"
PRESIGN_EXPIRES_S = 60
# EKS honours a token for 15 minutes after signing; refresh a minute early so a request that
# starts just before expiry does not reach the API server with a dead token.
TOKEN_LIFETIME_S = 15 * 60
REFRESH_MARGIN_S = 60


@dataclass(frozen=True)
class EksToken:
    """A bearer token and the monotonic time after which it should no longer be used."""

    token: str
    expires_at: float


@dataclass(frozen=True)
class ClusterEndpoint:
    """What a client needs to reach an EKS cluster: its API URL and CA bundle (PEM bytes)."""

    name: str
    endpoint: str
    ca_pem: bytes


def make_token(sts_client: Any, cluster_name: str) -> str:
    """Presign ``GetCallerIdentity`` with ``x-k8s-aws-id: cluster_name`` and encode it as an EKS token.

    ``sts_client`` must be a botocore STS client for a regional endpoint (the cluster's region).
    """
    if not cluster_name:
        raise ConfigError("EKS cluster name is empty; pass the cluster's name (not its ARN)")

    def add_cluster_header(request: Any, **_: Any) -> None:
        # Added before signing, so the header becomes part of the SigV4 signed headers.
        request.headers[CLUSTER_ID_HEADER] = cluster_name

    event = "before-sign.sts.GetCallerIdentity"
    sts_client.meta.events.register(event, add_cluster_header)
    try:
        url: str = sts_client.generate_presigned_url(
            "get_caller_identity", Params={}, ExpiresIn=PRESIGN_EXPIRES_S, HttpMethod="GET"
        )
    finally:
        sts_client.meta.events.unregister(event, add_cluster_header)
    encoded = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    return TOKEN_PREFIX + encoded


class EksTokenProvider:
    """Hands out a cached EKS token, minting a new one shortly before the old one expires.

    Thread-safe: a Lambda container (or the local pipeline) may submit from several threads.
    """

    def __init__(
        self,
        sts_client: Any,
        cluster_name: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        lifetime_s: float = TOKEN_LIFETIME_S,
        margin_s: float = REFRESH_MARGIN_S,
    ) -> None:
        self._sts = sts_client
        self._cluster = cluster_name
        self._clock = clock
        self._ttl = lifetime_s - margin_s
        self._lock = threading.Lock()
        self._cached: EksToken | None = None
        self.minted = 0  # how many tokens were made (tests and metrics)

    def token(self, *, force_refresh: bool = False) -> str:
        """A valid token; ``force_refresh`` after a 401 (e.g. the clock skewed or the role changed)."""
        with self._lock:
            now = self._clock()
            if force_refresh or self._cached is None or now >= self._cached.expires_at:
                self._cached = EksToken(make_token(self._sts, self._cluster), now + self._ttl)
                self.minted += 1
            return self._cached.token


def describe_cluster(eks_client: Any, cluster_name: str) -> ClusterEndpoint:
    """Endpoint and CA of ``cluster_name`` from ``eks:DescribeCluster``, with clear errors."""
    try:
        cluster = eks_client.describe_cluster(name=cluster_name)["cluster"]
    except eks_client.exceptions.ResourceNotFoundException as exc:
        raise ConfigError(
            f"EKS cluster {cluster_name!r} not found in region {eks_client.meta.region_name}; "
            "check the cluster name and AWS region"
        ) from exc
    except Exception as exc:  # botocore ClientError / connection errors: keep the cause, name the call
        raise KubernetesError(f"eks:DescribeCluster {cluster_name!r} failed: {exc}") from exc
    status = cluster.get("status")
    endpoint = cluster.get("endpoint")
    ca_b64 = (cluster.get("certificateAuthority") or {}).get("data")
    if status not in (None, "ACTIVE", "UPDATING") or not endpoint or not ca_b64:
        raise KubernetesError(
            f"EKS cluster {cluster_name!r} is not usable (status {status}, endpoint {endpoint!r}); "
            "wait until it is ACTIVE"
        )
    return ClusterEndpoint(name=cluster_name, endpoint=endpoint, ca_pem=base64.b64decode(ca_b64))
