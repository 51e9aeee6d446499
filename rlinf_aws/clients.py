"""The clients the workflow's functions use, built once per container from the settings.

Nothing here is global: each Lambda builds a :class:`PipelineClients` at module scope (once per
container) and passes its members into the pipeline functions. boto3 clients use botocore's standard
retry mode, which is the retry loop for AWS calls.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import ConfigError

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

    from rlinf_k8s.submitter import Submitter

log = logging.getLogger(__name__)

__all__ = ["PipelineClients", "boto_client", "read_secret"]


def boto_client(service: str, session: Any = None) -> Any:
    """A boto3 client with the standard retry mode (bounded, with backoff, on throttling and 5xx)."""
    import boto3
    from botocore.config import Config

    factory = session or boto3.session.Session()
    return factory.client(service, config=Config(retries={"mode": "standard", "max_attempts": 5}))


def read_secret(secrets: Any, secret_id: str) -> str:
    """The SecretString of ``secret_id``; '' when the secret exists but holds nothing."""
    response = secrets.get_secret_value(SecretId=secret_id)
    return str(response.get("SecretString") or "")


def _apply_mlflow_credentials(secret: str, secret_id: str) -> None:
    """MLflow reads its credentials from the environment: a JSON secret with username/password or token."""
    if not secret.strip():
        return
    try:
        doc = json.loads(secret)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"MLflow credentials secret {secret_id} is not JSON; store "
            '{"username": ..., "password": ...} or {"token": ...}'
        ) from exc
    if doc.get("token"):
        os.environ["MLFLOW_TRACKING_TOKEN"] = str(doc["token"])
    if doc.get("username"):
        os.environ["MLFLOW_TRACKING_USERNAME"] = str(doc["username"])
        os.environ["MLFLOW_TRACKING_PASSWORD"] = str(doc.get("password", ""))


@dataclass
class PipelineClients:
    """Lazily built clients; tests and the embedded default pass their own factories."""

    settings: PipelineSettings
    client_factory: Callable[[str], Any] = boto_client
    submitter_factory: Callable[[], Submitter] | None = None
    _cache: dict[str, Any] = field(default_factory=dict)

    def aws(self, service: str) -> Any:
        if service not in self._cache:
            self._cache[service] = self.client_factory(service)
        return self._cache[service]

    @property
    def storage(self) -> Storage:
        if "storage" not in self._cache:
            self._cache["storage"] = Storage(S3Objects(factory=lambda: self.aws("s3")))
        return self._cache["storage"]

    def submitter(self) -> Submitter:
        """The compute backend named by COMPUTE (EKS through IAM on AWS)."""
        if "submitter" not in self._cache:
            if self.submitter_factory is not None:
                self._cache["submitter"] = self.submitter_factory()
            else:
                self.settings.require("compute")
                from rlinf_k8s.submitter_factory import submitter_for

                self._cache["submitter"] = submitter_for(self.settings.compute)
        return self._cache["submitter"]

    def mlflow_factory(self) -> Callable[[], MlflowClient] | None:
        """A factory for the MLflow client, or None when no tracking URI is configured."""
        if not self.settings.mlflow_tracking_uri:
            return None

        def build() -> MlflowClient:
            if "mlflow" not in self._cache:
                if self.settings.mlflow_credentials_secret_arn:
                    arn = self.settings.mlflow_credentials_secret_arn
                    _apply_mlflow_credentials(read_secret(self.aws("secretsmanager"), arn), arn)
                # Our bounded retry (rlinf_bench.retry) is the only loop: MLflow's own HTTP retries (7, with
                # exponential backoff) would keep a Lambda waiting for minutes on a server that is down.
                os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
                os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
                from mlflow.tracking import MlflowClient

                self._cache["mlflow"] = MlflowClient(self.settings.mlflow_tracking_uri)
            return self._cache["mlflow"]

        return build
