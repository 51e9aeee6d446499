"""results_aggregator Lambda (state Aggregate): outcomes -> CheckpointReport with verdicts, stored. Logic:
rlinf_aws.state_aggregate."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.clients import PipelineClients
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_aggregate import aggregate
from rlinf_bench.contracts.workflow import AggregateInput

logger = Logger()
CLIENTS = PipelineClients(PipelineSettings.from_env())


@logger.inject_lambda_context
@event_parser(model=AggregateInput)
def lambda_handler(event: AggregateInput, context: LambdaContext) -> dict[str, Any]:
    result = aggregate(
        event,
        storage=CLIENTS.storage,
        mlflow=CLIENTS.mlflow_factory(),
        experiment=CLIENTS.settings.mlflow_experiment,
    )
    return result.model_dump(mode="json")
