"""checkpoint_router Lambda: S3 object events (via EventBridge -> SQS) -> one evaluation per complete checkpoint.

Thin on purpose: the logic is rlinf_bench.intake (tested without Lambda). Settings come from the
environment once per container; AWS clients and the intake config are built on the first invocation.
Imports stay light (no kubernetes, no mlflow) so the cold start stays small.
"""

from __future__ import annotations

from typing import Any

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.router_lambda import RouterSettings, build_router, make_handler

logger = Logger()  # service name from POWERTOOLS_SERVICE_NAME (template Globals)
copy_config_to_registered_loggers(source_logger=logger, include={"rlinf_bench"})

SETTINGS = RouterSettings.from_env()  # a missing variable fails the init with the variable's name
_session = boto3.session.Session()
_handle = make_handler(lambda: build_router(SETTINGS, _session.client))


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(_handle(event, context))
