"""request_planner Lambda (state Plan): check the EvalRequest, lay out the Map items. Logic: rlinf_aws.state_plan."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_plan import plan
from rlinf_bench.contracts.workflow import PlanInput

logger = Logger()
SETTINGS = PipelineSettings.from_env()


@logger.inject_lambda_context
@event_parser(model=PlanInput)
def lambda_handler(event: PlanInput, context: LambdaContext) -> dict[str, Any]:
    return plan(event, SETTINGS).model_dump(mode="json")
