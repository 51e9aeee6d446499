"""results_publisher Lambda (state Publish): MLflow, then one SNS message (email text + Slack payload).
Logic: rlinf_aws.state_publish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.clients import PipelineClients
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.sent_summaries import SentSummaries
from rlinf_aws.state_publish import publish
from rlinf_bench.contracts.workflow import AggregateResult

logger = Logger()
CLIENTS = PipelineClients(PipelineSettings.from_env())
CLIENTS.settings.require("results_topic_arn")


@logger.inject_lambda_context
@event_parser(model=AggregateResult)
def lambda_handler(event: AggregateResult, context: LambdaContext) -> dict[str, Any]:
    result = publish(
        event,
        storage=CLIENTS.storage,
        sns=CLIENTS.aws("sns"),
        topic_arn=CLIENTS.settings.results_topic_arn,
        mlflow=CLIENTS.mlflow_factory(),
        experiment=CLIENTS.settings.mlflow_experiment,
        report_html=CLIENTS.settings.report_html,
        sent=SentSummaries(Path(CLIENTS.settings.notified_log)) if CLIENTS.settings.notified_log else None,
    )
    if result.mlflow_error:
        logger.error("MLflow publish failed; the SNS message says so", extra={"error": result.mlflow_error})
    return result.model_dump(mode="json")
