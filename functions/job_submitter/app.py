"""job_submitter Lambda (Map item Task, waitForTaskToken): create the item's Job, which calls back itself.

The task token travels in the event and into the Job's environment; it is never logged (the event is
not logged, and SubmitInput hides the token from repr). Logic: rlinf_aws.state_submit.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.clients import PipelineClients
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_submit import submit
from rlinf_bench.contracts.workflow import SubmitInput

logger = Logger()
CLIENTS = PipelineClients(PipelineSettings.from_env())


@logger.inject_lambda_context
@event_parser(model=SubmitInput)
def lambda_handler(event: SubmitInput, context: LambdaContext) -> dict[str, Any]:
    result = submit(event, CLIENTS.submitter(), CLIENTS.settings)
    logger.info(
        "submitted", extra={"job": result.job_name, "namespace": result.namespace, "job_created": result.created}
    )
    return result.model_dump(mode="json")
