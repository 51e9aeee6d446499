"""What the intake starts for each complete checkpoint, and how long it waits for one.

The configuration lives outside the code, in an SSM parameter (``ssm:/name``), an S3 object
(``s3://bucket/key``) or a local file, as YAML or JSON. Every field has a default from the product
brief (4 LIBERO suites, 3 runs, 50 trials per task, greedy, the paper's baselines), so an empty
document is a valid configuration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from rlinf_bench.checkpoints.keys import DEFAULT_ROOT_PATTERN, compile_root_patterns
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import DEFAULT_PROBES as REQUEST_DEFAULT_PROBES
from rlinf_bench.contracts.request import EvalMatrix, EvalRequest
from rlinf_bench.contracts.suite_names import DEFAULT_SUITES
from rlinf_bench.contracts.versioned import describe_validation_error
from rlinf_bench.document_store import Storage, is_s3, parse_s3
from rlinf_bench.errors import ConfigError, InvalidRequestError, StorageError
from rlinf_bench.intake.backlog import BacklogPolicy
from rlinf_bench.ports import ObjectStore, ParameterSource
from rlinf_bench.request_checks import check_probe

#: The intake runs the probes that start without arguments by default (EvalMatrix's default, gpu and nccl).
DEFAULT_PROBES = REQUEST_DEFAULT_PROBES
MAX_QUIET_PERIOD_S = 24 * 3600.0
MAX_AGE_LIMIT_S = 14 * 24 * 3600.0  # SQS keeps a message 14 days at most
#: Step Functions takes an execution input of 256 KiB; the request for the longest checkpoint URI must fit.
MAX_REQUEST_BYTES = 200 * 1024


class IntakeConfig(EvalMatrix):
    """The eval matrix the intake requests (EvalMatrix: fields and defaults), plus the intake's timing and key rules."""

    model_config = ConfigDict(extra="forbid")

    #: nothing under the checkpoint may change for this long before it counts as complete (seconds, up to a day)
    quiet_period_s: float = Field(default=60.0, ge=0, le=MAX_QUIET_PERIOD_S, allow_inf_nan=False)
    #: a checkpoint still incomplete this long after its first event goes to the DLQ with the reason (seconds, up
    #: to SQS's longest retention: a message older than that is gone anyway)
    max_age_s: float = Field(default=6 * 3600.0, gt=0, le=MAX_AGE_LIMIT_S, allow_inf_nan=False)
    root_patterns: list[Annotated[str, Field(max_length=1000)]] = Field(
        default_factory=lambda: [DEFAULT_ROOT_PATTERN], min_length=1, max_length=32
    )
    #: executions per experiment at once and which held checkpoints start next (docs/intake.md, "Backlog")
    backlog: BacklogPolicy = Field(default_factory=BacklogPolicy)

    @field_validator("suites")
    @classmethod
    def _some_suite(cls, value: list[Any]) -> list[Any]:
        if not value:
            raise ValueError(
                "suites is empty: the intake evaluates each checkpoint on its suites, so name at least one "
                f"(e.g. [{DEFAULT_SUITES[0]}]); leave suites out for the default {list(DEFAULT_SUITES)}"
            )
        return value

    @field_validator("root_patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        compile_root_patterns(tuple(value))  # raises ConfigError naming the bad pattern
        return value

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(self.root_patterns)

    def request_for(self, checkpoint: CheckpointRef) -> EvalRequest:
        """The EvalRequest (Step Functions input) for one checkpoint; deterministic, so re-starts match.

        A checkpoint no request can be built for fails the same way on every delivery: InvalidRequestError,
        which the router dead-letters at first sight with this reason (never retried as transient).
        """
        try:
            return EvalRequest(checkpoint=checkpoint, **self.matrix_fields())
        except ValidationError as exc:
            raise InvalidRequestError(
                describe_validation_error("EvalRequest", f"the request for {checkpoint.uri}", exc)
            ) from exc


def parse_config_text(text: str, *, source: str) -> IntakeConfig:
    """Parse YAML or JSON text (empty = all defaults); errors name the source and each bad field."""
    data: Any
    stripped = text.strip()
    if not stripped:
        data = {}
    elif stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"intake config {source} is not valid JSON: {exc}") from exc
    else:
        import yaml  # only YAML sources pay for the import (the Lambda's cold start stays small)

        try:
            data = yaml.safe_load(stripped) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"intake config {source} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"intake config {source} must be a mapping of fields, got {type(data).__name__}")
    try:
        config = IntakeConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error("intake config", source, exc)) from exc
    try:
        sample = config.request_for(CheckpointRef(uri="s3://check/x", experiment="check", global_step=0))
    except InvalidRequestError as exc:
        raise ConfigError(f"intake config {source}: {exc}") from exc
    size = len(sample.to_json().encode())
    if size > MAX_REQUEST_BYTES:
        raise ConfigError(
            f"intake config {source}: the request it makes for each checkpoint is {size} bytes; at most "
            f"{MAX_REQUEST_BYTES} leave room for the checkpoint's URI in Step Functions' 256 KiB input: "
            "shorten extra, probes or env"
        )
    for i, probe in enumerate(config.probes):
        try:
            check_probe(probe, where=f"probes[{i}]")
        except InvalidRequestError as exc:  # a probe that cannot start would fail every checkpoint's execution
            raise ConfigError(f"intake config {source}: {exc}") from exc
    return config


def load_intake_config(
    source: str,
    *,
    parameters: ParameterSource | None = None,
    objects: ObjectStore | None = None,
) -> IntakeConfig:
    """Read the intake configuration from ``ssm:/param`` (through ``parameters``), ``s3://bucket/key``
    (through ``objects``), a local file, or '' (defaults)."""
    if not source:
        return IntakeConfig()
    if source.startswith("ssm:"):
        name = source[len("ssm:") :]
        if parameters is None:
            raise ConfigError(f"intake config {source}: no SSM access here (no parameter source was given)")
        try:
            value = parameters.read_parameter(name)
        except StorageError as exc:
            raise ConfigError(
                f"cannot read intake config SSM parameter {name!r}: {exc}; create it or fix INTAKE_CONFIG"
            ) from exc
        return parse_config_text(value, source=source)
    if is_s3(source):
        if objects is None:
            raise ConfigError(f"intake config {source}: no S3 access here (no object store was given)")
        parse_s3(source, what="intake config", need_key=True)
        try:
            body = Storage(objects).read_text(source)
        except StorageError as exc:
            raise ConfigError(f"cannot read intake config {source}: {exc}; upload it or fix INTAKE_CONFIG") from exc
        return parse_config_text(body, source=source)
    path = Path(source)
    if not path.is_file():
        raise ConfigError(f"intake config file {source} does not exist; give ssm:/name, s3://bucket/key or a file")
    return parse_config_text(path.read_text(), source=source)
