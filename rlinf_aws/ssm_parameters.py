"""Configuration kept in SSM Parameter Store (:class:`rlinf_bench.ports.ParameterSource`): the intake config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rlinf_aws.lazy_client import LazyClient
from rlinf_bench.errors import StorageError

__all__ = ["SsmParameters"]


class SsmParameters:
    """Reads (and decrypts) parameters through an SSM client, passed in or built on first use."""

    def __init__(self, client: Any = None, *, factory: Callable[[], Any] | None = None) -> None:
        self._client = LazyClient("ssm", client, factory)

    def read_parameter(self, name: str) -> str:
        try:
            return str(self._client.get().get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"])
        except Exception as exc:  # botocore's ClientError types are generated per client
            raise StorageError(str(exc)) from exc
