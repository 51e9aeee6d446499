"""Building the official ``kubernetes`` ApiClient (EKS or kubeconfig) and calling it with bounded retries.

Retries are ours, not urllib3's: the client is built with ``retries=0`` so that one policy decides
what is retried (connection errors, 5xx, 429), how often and with what backoff, and a 401 triggers
exactly one token refresh. Every failure ends in a typed error naming the operation.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import urllib3
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from rlinf_bench.errors import ClusterUnreachableError, ConfigError, KubernetesError
from rlinf_bench.retry import RetryPolicy, call_with_retry
from rlinf_k8s.eks_auth import ClusterEndpoint, EksTokenProvider, describe_cluster

__all__ = [
    "ApiCaller",
    "RetryPolicy",
    "api_client_for_eks",
    "api_client_for_endpoint",
    "api_client_for_url",
    "api_client_from_kubeconfig",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


#: Many Lambdas may call one API server at once: spread their retries (full jitter).
DEFAULT_POLICY = RetryPolicy(attempts=4, backoff_s=0.5, max_backoff_s=8.0, jitter=True)
#: (connect, read) seconds for one API request.
DEFAULT_REQUEST_TIMEOUT_S = (5.0, 30.0)


def _set_bearer(config: k8s.Configuration, token: str) -> None:
    config.api_key = {"authorization": token}
    config.api_key_prefix = {"authorization": "Bearer"}


class ApiCaller:
    """Calls one ApiClient with the retry policy; refreshes the bearer token once on a 401."""

    def __init__(
        self,
        api_client: k8s.ApiClient,
        *,
        policy: RetryPolicy | None = None,
        refresh_token: Callable[[], str] | None = None,
        request_timeout_s: tuple[float, float] = DEFAULT_REQUEST_TIMEOUT_S,
    ) -> None:
        self.api_client = api_client
        self.policy = policy or DEFAULT_POLICY
        self.request_timeout_s = request_timeout_s
        self._refresh_token = refresh_token

    @property
    def host(self) -> str:
        return str(self.api_client.configuration.host)

    def call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` with retries; ``what`` names the operation in errors.

        4xx other than 401/429 are raised at once as :class:`ApiException` so callers can act on
        404/409; retryable failures raise :class:`ClusterUnreachableError` once the budget is spent.
        """
        kwargs.setdefault("_request_timeout", self.request_timeout_s)
        refreshed = False

        def attempt() -> T:
            nonlocal refreshed
            while True:
                try:
                    return fn(*args, **kwargs)
                except ApiException as exc:
                    if exc.status == 401 and self._refresh_token is not None and not refreshed:
                        # A stale or rejected token: mint a fresh one and try again, once, inside this
                        # attempt, so the refresh does not use up a retry.
                        log.info("%s: 401 from %s, refreshing the bearer token", what, self.host)
                        _set_bearer(self.api_client.configuration, self._refresh_token())
                        refreshed = True
                        continue
                    raise self._rejection(what, exc) from exc

        def give_up(last: BaseException, attempts: int) -> BaseException:
            return ClusterUnreachableError(
                f"{what}: the Kubernetes API at {self.host} did not answer after {attempts} attempts "
                f"(last error: {_short(last)}); check that the cluster endpoint is reachable from here"
            )

        return call_with_retry(attempt, policy=self.policy, retryable=_retryable, give_up=give_up, what=what)

    def _rejection(self, what: str, exc: ApiException) -> Exception:
        """The error for an API answer that no retry will change (or ``exc`` itself, for callers to act on)."""
        if exc.status == 401:
            return KubernetesError(
                f"{what}: the API server at {self.host} rejected our credentials (401) "
                "even after a token refresh; check the EKS access entry for this IAM role"
            )
        if exc.status == 403:
            return KubernetesError(
                f"{what}: forbidden (403) at {self.host}: {_reason(exc)}; "
                "check the Role/RoleBinding in deploy/k8s/rbac.yaml for this identity"
            )
        return exc


def _retryable(exc: BaseException) -> bool:
    """5xx, 429 and transport failures (connection refused, DNS, timeouts, TLS) are worth another try."""
    if isinstance(exc, ApiException):
        return exc.status in RETRYABLE_STATUS
    return isinstance(exc, urllib3.exceptions.HTTPError)


def _reason(exc: ApiException) -> str:
    return f"{exc.status} {exc.reason}".strip()


def _short(exc: BaseException | None) -> str:
    if isinstance(exc, ApiException):
        return _reason(exc)
    return type(exc).__name__ + (f": {exc}" if exc else "")


def _base_configuration(host: str) -> k8s.Configuration:
    config = k8s.Configuration()
    config.host = host
    config.retries = 0  # ApiCaller's policy is the only retry loop
    return config


def api_client_for_url(host: str, *, token: str | None = None, ca_file: str | None = None) -> k8s.ApiClient:
    """An ApiClient for an explicit API URL (tests, port-forwards, proxies)."""
    config = _base_configuration(host)
    if token:
        _set_bearer(config, token)
    if ca_file:
        config.ssl_ca_cert = ca_file
    return k8s.ApiClient(config)


def _write_ca(endpoint: ClusterEndpoint, ca_dir: Path | None) -> str:
    # The client wants a file path; Lambda's /tmp is writable and survives warm invocations.
    folder = ca_dir or Path(tempfile.gettempdir())
    path = folder / f"eks-ca-{endpoint.name}.pem"
    if not path.exists() or path.read_bytes() != endpoint.ca_pem:
        path.write_bytes(endpoint.ca_pem)
    return str(path)


def api_client_for_eks(
    eks_client: Any,
    sts_client: Any,
    cluster_name: str,
    *,
    policy: RetryPolicy | None = None,
    ca_dir: Path | None = None,
) -> ApiCaller:
    """An :class:`ApiCaller` for an EKS cluster: endpoint + CA from DescribeCluster, cached IAM bearer tokens."""
    endpoint = describe_cluster(eks_client, cluster_name)
    return api_client_for_endpoint(endpoint, EksTokenProvider(sts_client, cluster_name), policy=policy, ca_dir=ca_dir)


def api_client_for_endpoint(
    endpoint: ClusterEndpoint,
    tokens: EksTokenProvider,
    *,
    policy: RetryPolicy | None = None,
    ca_dir: Path | None = None,
) -> ApiCaller:
    """An :class:`ApiCaller` for a known endpoint whose bearer tokens come from ``tokens``."""
    config = _base_configuration(endpoint.endpoint)
    if endpoint.endpoint.startswith("https://"):
        config.ssl_ca_cert = _write_ca(endpoint, ca_dir)
    _set_bearer(config, tokens.token())

    # Called by the client before each request: swaps in a fresh token when the cached one is near expiry.
    def refresh_hook(conf: k8s.Configuration) -> None:
        _set_bearer(conf, tokens.token())

    config.refresh_api_key_hook = refresh_hook  # type: ignore[assignment]  # typed as None upstream
    return ApiCaller(k8s.ApiClient(config), policy=policy, refresh_token=lambda: tokens.token(force_refresh=True))


def api_client_from_kubeconfig(
    path: str | None = None, *, context: str | None = None, policy: RetryPolicy | None = None
) -> ApiCaller:
    """An :class:`ApiCaller` for any cluster from a kubeconfig (default ``$KUBECONFIG`` or ``~/.kube/config``)."""
    from kubernetes import config as kube_config
    from kubernetes.config.config_exception import ConfigException

    config = k8s.Configuration()
    try:
        kube_config.load_kube_config(config_file=path, context=context, client_configuration=config)
    except (ConfigException, OSError) as exc:
        where = path or "$KUBECONFIG / ~/.kube/config"
        raise ConfigError(f"cannot load kubeconfig {where} (context {context or 'current'}): {exc}") from exc
    config.retries = 0
    return ApiCaller(k8s.ApiClient(config), policy=policy)
