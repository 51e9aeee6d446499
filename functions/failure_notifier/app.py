"""failure_notifier Lambda: two jobs on the failure paths of the state machine.

- ``explain_run`` (inside a Map): a Job failed or went silent; ask Kubernetes why, return a failed outcome.
- ``notify``: the execution stops without a verdict; send the failure notice to SNS.
Logic: rlinf_aws.state_notify_failure.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.clients import PipelineClients
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_notify_failure import explain_run_failure, notify_failure
from rlinf_bench.contracts.workflow import FailureEvent, RunFailureInput

logger = Logger()
CLIENTS = PipelineClients(PipelineSettings.from_env())


@logger.inject_lambda_context
@event_parser(model=FailureEvent)
def lambda_handler(event: FailureEvent, context: LambdaContext) -> dict[str, Any]:
    doc = event.root
    if isinstance(doc, RunFailureInput):
        outcome = explain_run_failure(doc, CLIENTS.submitter)
        logger.warning(
            "run failed", extra={"job": outcome.job_name, "error": outcome.error, "reason": outcome.job_reason}
        )
        return outcome.model_dump(mode="json", exclude_none=True)
    settings = CLIENTS.settings
    notice = notify_failure(
        doc, sns=CLIENTS.aws("sns"), topic_arn=settings.results_topic_arn, rerun=settings.rerun_command
    )
    logger.error("evaluation failed", extra={"subject": notice.subject})
    return notice.model_dump(mode="json")
