"""A private AWS account on loopback: moto in server mode, in this process.

Server mode (not in-process mocking) because the Jobs are separate processes: they call back with
SendTaskSuccess/Failure/Heartbeat and read the checkpoint from S3 through ``AWS_ENDPOINT_URL``. The
server runs in a thread of this process, so the in-process Lambda dispatch (rlinf_local.lambdas) and
the moto corrections (rlinf_local.moto_patches) apply to what it serves.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from rlinf_local.lambdas import InProcessLambdas, environment

__all__ = ["REGION", "LocalAws", "local_aws"]

REGION = "us-east-1"
#: moto's engine executes the ASL; Lambda invokes come to rlinf_local.lambdas instead of Docker.
MOTO_CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalAws:
    """The server's endpoint, the environment every client (ours and the Jobs') needs, and the Lambdas."""

    endpoint: str
    lambdas: InProcessLambdas

    @property
    def job_env(self) -> dict[str, str]:
        """What a Job needs to reach this account (JOB_ENV): endpoint, region and dummy credentials."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "rlinf-local",
            "AWS_SECRET_ACCESS_KEY": "rlinf-local",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
        }

    def client(self, service: str) -> Any:
        import boto3

        return boto3.client(service, region_name=REGION, endpoint_url=self.endpoint)


@contextmanager
def local_aws(port: int | None = None) -> Iterator[LocalAws]:
    """Start moto on loopback; while open, this process's AWS clients (the in-process Lambdas') reach it."""
    import requests
    from moto.server import ThreadedMotoServer

    from rlinf_local.moto_patches import moto_fixes

    port = port or free_port()
    endpoint = f"http://127.0.0.1:{port}"
    lambdas = InProcessLambdas()
    aws = LocalAws(endpoint=endpoint, lambdas=lambdas)
    env = {**aws.job_env, "MOTO_PORT": str(port)}  # MOTO_PORT: the engine's own calls go to this server
    env.pop("AWS_ENDPOINT_URL")
    with ExitStack() as stack:
        stack.enter_context(environment({**env, "AWS_ENDPOINT_URL": endpoint}))
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        stack.callback(server.stop)
        # moto's backends are process-wide: without a reset the next stack in this process (a second
        # Embedded in one test session) finds the first one's secret, bucket and tables.
        stack.callback(lambda: requests.post(f"{endpoint}/moto-api/reset", timeout=10))
        requests.post(f"{endpoint}/moto-api/config", json=MOTO_CONFIG, timeout=10).raise_for_status()
        stack.enter_context(moto_fixes())
        stack.enter_context(lambdas.installed())
        lambdas.sqs_factory = lambda: aws.client("sqs")
        yield aws
