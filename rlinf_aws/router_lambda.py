"""Wire the router to Lambda: Powertools batch processing and DynamoDB idempotency.

``functions/checkpoint_router/app.py`` is this module plus environment variables; ``replay-events``
and the tests build the same handler against moto, so what they exercise is what runs in Lambda.
Clients are created on the first invocation, not at import, which keeps the cold import small.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from rlinf_aws.backlog_store import DynamoBacklogStore
from rlinf_aws.execution_names import matrix_digest
from rlinf_aws.execution_starter import ExecutionStarter, verify_table
from rlinf_aws.lambda_settings import env_number
from rlinf_aws.s3_objects import S3Objects
from rlinf_aws.sqs_dead_letters import SqsDeadLetters
from rlinf_aws.ssm_parameters import SsmParameters
from rlinf_bench.checkpoints.completeness import Clock, utc_now
from rlinf_bench.checkpoints.listing import CheckpointLister
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.errors import CheckpointNotReadyError, ConfigError
from rlinf_bench.intake.backlog import Backlog
from rlinf_bench.intake.config import MAX_AGE_LIMIT_S, MAX_QUIET_PERIOD_S, IntakeConfig, load_intake_config
from rlinf_bench.intake.router import Outcome, RecordResult, Router, StartOnce
from rlinf_bench.ports import DeadLetterSink

ClientFactory = Callable[[str], Any]  # service name -> boto3 client
#: Step Functions keeps an execution's name 90 days: remembering a start longer buys nothing.
MAX_IDEMPOTENCY_EXPIRY_S = 90 * 24 * 3600


@dataclass(frozen=True)
class RouterSettings:
    """The function's environment, read once per container."""

    state_machine_arn: str
    idempotency_table: str
    dead_letter_queue_url: str
    intake_config: str = ""  # ssm:/name | s3://bucket/key | '' (defaults)
    quiet_period_s: float | None = None  # overrides the intake config when set
    max_age_s: float | None = None
    idempotency_expiry_s: int = 7 * 24 * 3600

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> RouterSettings:
        """Read STATE_MACHINE_ARN, IDEMPOTENCY_TABLE, DEAD_LETTER_QUEUE_URL (+ optional ones); name what is missing."""
        required = ("STATE_MACHINE_ARN", "IDEMPOTENCY_TABLE", "DEAD_LETTER_QUEUE_URL")
        missing = [name for name in required if not env.get(name)]
        if missing:
            raise ConfigError(
                f"checkpoint_router is missing environment variable(s) {', '.join(missing)}; "
                "set them in template.yaml (the stack does) or in your shell"
            )

        expiry = env_number(env, "IDEMPOTENCY_EXPIRY_S", low=60, high=MAX_IDEMPOTENCY_EXPIRY_S, whole=True)
        return cls(
            state_machine_arn=env["STATE_MACHINE_ARN"],
            idempotency_table=env["IDEMPOTENCY_TABLE"],
            dead_letter_queue_url=env["DEAD_LETTER_QUEUE_URL"],
            intake_config=env.get("INTAKE_CONFIG", ""),
            quiet_period_s=env_number(env, "QUIET_PERIOD_S", low=0, high=MAX_QUIET_PERIOD_S),
            max_age_s=env_number(env, "MAX_AGE_S", low=1, high=MAX_AGE_LIMIT_S),
            idempotency_expiry_s=int(expiry) if expiry is not None else 7 * 24 * 3600,
        )


def _mark_replayed(response: Any, idempotent_data: DataRecord) -> Any:
    # Called by Powertools only when the answer came from the idempotency store: a duplicate event.
    return {**response, "replayed": True} if isinstance(response, dict) else response


def idempotent_start(
    starter: ExecutionStarter, persistence: DynamoDBPersistenceLayer, config: IdempotencyConfig
) -> StartOnce:
    """Wrap ``starter.start`` in Powertools idempotency keyed on the checkpoint root URI and the eval matrix.

    A duplicate event for the same checkpoint starts nothing; a changed eval matrix is a new evaluation.
    """

    @idempotent_function(
        data_keyword_argument="checkpoint",
        persistence_store=persistence,
        config=config,
        key_prefix="checkpoint_router.start",
    )
    # Only ``checkpoint`` (the key) is hashed; the request passes through as the object the router built.
    def start_checkpoint(*, checkpoint: dict[str, Any], request: EvalRequest) -> dict[str, Any]:
        return starter.start(request).to_dict()

    def start_once(ref: CheckpointRef, request: EvalRequest) -> dict[str, Any]:
        key = {**ref.model_dump(mode="json"), "matrix": matrix_digest(request)}
        result: dict[str, Any] = start_checkpoint(checkpoint=key, request=request)
        return result

    return start_once


def idempotent_dead_letters(
    sink: SqsDeadLetters, persistence: DynamoDBPersistenceLayer, config: IdempotencyConfig
) -> DeadLetterSink:
    """Wrap the DLQ sink in Powertools idempotency keyed on the letter id (message id and record).

    The router remembers its letters per container; a redelivery that lands in another container
    (a bad record beside a pending one comes back every visibility timeout) is answered from the table
    instead of sending a second copy. The key rides in the start's ``[uri, matrix]`` shape, under its
    own prefix, so one table and one config serve both.
    """

    @idempotent_function(
        data_keyword_argument="letter",
        persistence_store=persistence,
        config=config,
        key_prefix="checkpoint_router.dead_letter",
    )
    def send_letter(*, letter: dict[str, str], body: str, reason: str) -> dict[str, str]:
        sink.send(body, reason, letter_id=letter["uri"])
        return {"letter_id": letter["uri"]}

    class _Once:
        def send(self, body: str, reason: str, *, letter_id: str) -> None:
            send_letter(letter={"uri": letter_id, "matrix": "dead-letter"}, body=body, reason=reason)

    return _Once()


def build_router(
    settings: RouterSettings,
    client: ClientFactory,
    *,
    clock: Clock = utc_now,
    observer: Callable[[RecordResult], None] | None = None,
    config: IntakeConfig | None = None,
    verify: bool = True,
) -> tuple[Router, IdempotencyConfig]:
    """The production router: S3 listing, SQS dead letters, Step Functions behind DynamoDB idempotency."""
    starter = ExecutionStarter(client("stepfunctions"), settings.state_machine_arn)
    dynamodb = client("dynamodb")
    if verify:
        starter.verify()
        verify_table(dynamodb, settings.idempotency_table)
    if config is None:
        config = load_intake_config(
            settings.intake_config,
            parameters=SsmParameters(factory=lambda: client("ssm")),
            objects=S3Objects(factory=lambda: client("s3")),
        )
    overrides = {
        k: v
        for k, v in (("quiet_period_s", settings.quiet_period_s), ("max_age_s", settings.max_age_s))
        if v is not None
    }
    if overrides:
        config = config.model_copy(update=overrides)
    idem_config = IdempotencyConfig(
        event_key_jmespath="[uri, matrix]",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=settings.idempotency_expiry_s,
        use_local_cache=True,
        response_hook=_mark_replayed,
    )
    persistence = DynamoDBPersistenceLayer(table_name=settings.idempotency_table, boto3_client=dynamodb)
    router = Router(
        config=config,
        lister=CheckpointLister(S3Objects(client("s3"))),
        start_once=idempotent_start(starter, persistence, idem_config),
        dead_letters=idempotent_dead_letters(
            SqsDeadLetters(client("sqs"), settings.dead_letter_queue_url), persistence, idem_config
        ),
        clock=clock,
        observer=observer,
        backlog=Backlog(config.backlog, DynamoBacklogStore(dynamodb, settings.idempotency_table)),
    )
    return router, idem_config


def _sent_at(record: SQSRecord) -> datetime | None:
    raw = record.attributes.sent_timestamp
    try:
        return datetime.fromtimestamp(int(raw) / 1000, UTC) if raw else None
    except ValueError:
        return None


def handle_record(router: Router, record: SQSRecord) -> list[RecordResult]:
    """Route one SQS record; a deferred checkpoint raises so the record becomes a batch item failure."""
    # SQS's message id is the same on every receive: the router dead-letters each record of it once.
    results = router.route(record.body, first_seen=_sent_at(record), message_id=record.message_id)
    deferred = [r.reason for r in results if r.outcome is Outcome.DEFERRED]
    if deferred:
        raise CheckpointNotReadyError("; ".join(deferred))
    return results


#: EventBridge's detail-type for a Step Functions execution that changed status (the template's rule).
EXECUTION_STATUS_CHANGE = "Step Functions Execution Status Change"


def handle_execution_end(router: Router, event: dict[str, Any]) -> dict[str, Any]:
    """An execution ended (EventBridge rule on its status change): release the backlog of its experiment."""
    detail = event.get("detail") or {}
    if detail.get("status") == "RUNNING":
        return {"released": []}
    try:
        uri = EvalRequest.from_json(str(detail.get("input") or ""), source="execution input").checkpoint.uri
    except Exception as exc:  # not one of ours (another state machine's input): nothing to release
        return {"released": [], "skipped": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"released": [e.uri for e in router.execution_ended(uri)]}


def make_handler(
    build: Callable[[], tuple[Router, IdempotencyConfig]],
) -> Callable[[dict[str, Any], Any], PartialItemFailureResponse]:
    """An SQS batch handler that builds its router on the first call (a config error then fails loudly)."""
    cached = functools.cache(build)

    def handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
        if isinstance(event, dict) and event.get("detail-type") == EXECUTION_STATUS_CHANGE:
            return handle_execution_end(cached()[0], event)  # type: ignore[return-value]
        if not isinstance(event, dict) or not isinstance(event.get("Records"), list):
            raise ConfigError(
                "checkpoint_router takes SQS batches ({'Records': [...]}); wrap S3 events in an SQS message "
                "(see events/sqs-*.json) or use `rlinf-bench replay-events`"
            )
        router, idem_config = cached()
        if context is not None:
            idem_config.register_lambda_context(context)
        # raise_on_entire_batch_failure=False: a batch of only deferred records is normal, not an error.
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
        return process_partial_response(
            event=event,
            record_handler=functools.partial(handle_record, router),
            processor=processor,
            context=context,
        )

    return handler
