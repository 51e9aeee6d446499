"""Start one Step Functions execution per checkpoint, named after it.

The execution name is ``<request id>-m<matrix hash>-a<attempt>`` (rlinf_aws.execution_names): Step
Functions refuses a second execution with the same name (``ExecutionAlreadyExists``) for 90 days, which
makes the start itself idempotent even when every other layer (DynamoDB idempotency, SQS dedup) is
bypassed. A re-run (:meth:`ExecutionStarter.rerun`) is the next attempt, under a new name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlinf_aws.execution_names import execution_name
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.errors import ConfigError, InvalidRequestError

#: Step Functions' answers that no retry changes: the name or the input itself is refused.
REFUSED_REQUEST = ("InvalidName", "InvalidExecutionInput", "ValidationException")


@dataclass(frozen=True)
class StartResult:
    name: str
    execution_arn: str
    already_started: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "execution_arn": self.execution_arn, "already_started": self.already_started}


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN an execution named ``name`` has (or would have) on ``state_machine_arn``."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + name


def _error_code(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


class ExecutionStarter:
    """Starts executions of one state machine through an injected Step Functions client."""

    def __init__(self, sfn: Any, state_machine_arn: str) -> None:
        if not state_machine_arn:
            raise ConfigError("no state machine ARN: set STATE_MACHINE_ARN or pass --state-machine-arn")
        self._sfn = sfn
        self.state_machine_arn = state_machine_arn

    def start(self, request: EvalRequest) -> StartResult:
        """Start the evaluation of ``request``; an existing execution of that name counts as started."""
        name = execution_name(request)
        # Step Functions answers a repeated start of a *running* execution (same name and input) with
        # success, so ask first: that is how a second trigger learns it was a duplicate.
        if self.exists(name):
            return StartResult(name, execution_arn(self.state_machine_arn, name), already_started=True)
        try:
            resp = self._sfn.start_execution(stateMachineArn=self.state_machine_arn, name=name, input=request.to_json())
        except Exception as exc:
            if _error_code(exc) == "ExecutionAlreadyExists":
                return StartResult(name, execution_arn(self.state_machine_arn, name), already_started=True)
            if _error_code(exc) in REFUSED_REQUEST:  # the same answer on every try: refused at first sight
                raise InvalidRequestError(
                    f"Step Functions refused execution {name[:80]!r} ({_error_code(exc)}): {str(exc)[:300]}"
                ) from exc
            if _error_code(exc) in ("StateMachineDoesNotExist", "StateMachineDeleting"):
                raise ConfigError(
                    f"state machine {self.state_machine_arn} does not exist; deploy it or fix STATE_MACHINE_ARN"
                ) from exc
            raise
        return StartResult(name, resp["executionArn"], already_started=False)

    def status(self, name: str) -> str | None:
        """The status of the execution called ``name`` (RUNNING, SUCCEEDED, FAILED...), None when there is none."""
        try:
            desc = self._sfn.describe_execution(executionArn=execution_arn(self.state_machine_arn, name))
        except Exception as exc:
            if _error_code(exc) == "ExecutionDoesNotExist":
                return None
            raise
        return str(desc["status"])

    def latest_attempt(self, request: EvalRequest) -> tuple[int, str | None]:
        """(highest attempt that exists, its status); (0, None) when the checkpoint and matrix never ran."""
        attempt, status = 0, None
        while True:
            found = self.status(execution_name(request, attempt + 1))
            if found is None:
                return attempt, status
            attempt, status = attempt + 1, found

    def rerun(self, request: EvalRequest) -> StartResult:
        """Start the next attempt of ``request``'s checkpoint and matrix (after a failed or finished one).

        Finished runs are kept: attempts share the result folder and eval Jobs resume from their files.
        """
        last, status = self.latest_attempt(request)
        if status == "RUNNING":
            raise ConfigError(
                f"attempt {last} ({execution_name(request, last)}) is still running; wait for it or stop it first"
            )
        return self.start(request.model_copy(update={"attempt": last + 1}))

    def exists(self, name: str) -> bool:
        """Whether an execution of this name exists (the checkpoint was already evaluated or is running)."""
        try:
            self._sfn.describe_execution(executionArn=execution_arn(self.state_machine_arn, name))
        except Exception as exc:
            if _error_code(exc) == "ExecutionDoesNotExist":
                return False
            raise
        return True

    def verify(self) -> None:
        """Fail fast with a configuration error when the state machine is missing."""
        try:
            self._sfn.describe_state_machine(stateMachineArn=self.state_machine_arn)
        except Exception as exc:
            if _error_code(exc) in ("StateMachineDoesNotExist", "InvalidArn"):
                raise ConfigError(
                    f"state machine {self.state_machine_arn} not found ({_error_code(exc)}); "
                    "deploy the stack's state machine or set STATE_MACHINE_ARN to an existing one"
                ) from exc
            raise


def verify_table(dynamodb: Any, table_name: str) -> None:
    """Fail fast with a configuration error when the idempotency table is missing."""
    if not table_name:
        raise ConfigError("no idempotency table: set IDEMPOTENCY_TABLE to the DynamoDB table's name")
    try:
        dynamodb.describe_table(TableName=table_name)
    except Exception as exc:
        if _error_code(exc) == "ResourceNotFoundException":
            raise ConfigError(
                f"idempotency table {table_name!r} not found; deploy the stack's table or fix IDEMPOTENCY_TABLE"
            ) from exc
        raise
