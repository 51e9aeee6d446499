"""queue_sentinel Lambda (every 5 minutes): keep Kueue Jobs that wait for admission alive, up to their limit.

Logic: rlinf_aws.state_queue_sentinel and rlinf_k8s.queue_sentinel.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.clients import PipelineClients
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_queue_sentinel import run_queue_sentinel

logger = Logger()
CLIENTS = PipelineClients(PipelineSettings.from_env())


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = run_queue_sentinel(CLIENTS.submitter(), CLIENTS.aws("stepfunctions"), CLIENTS.settings.namespace)
    for name, cause in report.failed.items():
        logger.warning("queued too long", extra={"job": name, "cause": cause})
    logger.info("queue sentinel swept", extra={"heartbeats": len(report.heartbeats), "errors": report.errors})
    return {"heartbeats": report.heartbeats, "failed": report.failed, "errors": report.errors}
