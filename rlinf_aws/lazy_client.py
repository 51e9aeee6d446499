"""A boto3 client passed in, or built on first use: a command or Job that never reaches a service needs no AWS set-up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LazyClient"]


class LazyClient:
    """``client`` when given, else ``factory()`` (default: boto3's client for ``service``) on the first :meth:`get`."""

    def __init__(self, service: str, client: Any = None, factory: Callable[[], Any] | None = None) -> None:
        self.service = service
        self._client = client
        self._factory = factory

    def get(self) -> Any:
        if self._client is None:
            if self._factory is not None:
                self._client = self._factory()
            else:
                import boto3

                self._client = boto3.client(self.service)
        return self._client
