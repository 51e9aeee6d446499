"""The workflow Lambdas' environment, read once per container (the SAM template sets every variable)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_bench.contracts.limits import MAX_QUEUE_LIMIT_MIN, Name, SettingText, Uri
from rlinf_bench.errors import ConfigError

__all__ = ["PipelineSettings", "env_number"]


def env_number(
    env: Mapping[str, str], name: str, *, low: float, high: float, unit: str = "seconds", whole: bool = False
) -> float | None:
    """The environment variable ``name`` as a finite number from ``low`` to ``high`` (None when unset or empty).

    Anything else (text, inf, NaN, out of range, a fraction where whole ``unit`` are meant) is refused at load
    with the variable, the value and the range named: a Lambda that cannot read its settings must fail at
    its first call, not retry or wait for ever."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not low <= value <= high or (whole and not value.is_integer()):
        kind = f"a whole number of {unit}" if whole else f"a number of {unit}"
        raise ConfigError(
            f"{name}={raw[:40]!r} is not {kind} from {low:g} to {high:g}; fix the variable "
            "(template.yaml sets it from a stack parameter)"
        )
    return value


DEFAULT_EXPERIMENT = "RLinf"


class PipelineSettings(BaseModel):
    """What the workflow's functions need besides their input: where results go, where Jobs run,
    where verdicts are published. Empty strings mean "not configured" and are checked where used,
    so a function only fails for the settings it needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    results_prefix: Uri = Field(default="", description="RESULTS_PREFIX: s3://bucket/results or a folder")
    compute: Uri = Field(default="", description="COMPUTE: eks:CLUSTER@REGION | kubeconfig:... | local:DIR")
    eval_image: Uri = Field(default="", description="EVAL_IMAGE: used when the request names none")
    probe_image: Uri = Field(default="", description="PROBE_IMAGE: used when the request names none")
    namespace: Name = Field(default="", description="NAMESPACE: where Jobs run (the stack's RBAC is scoped to it)")
    kueue_queue: Name = Field(default="", description="KUEUE_QUEUE: LocalQueue for requests naming none; empty: off")
    kueue_priority_class: Name = Field(default="", description="KUEUE_PRIORITY_CLASS: their WorkloadPriorityClass")
    kueue_queue_limit_min: int = Field(
        default=120,
        ge=1,
        le=MAX_QUEUE_LIMIT_MIN,
        description="KUEUE_QUEUE_LIMIT_MIN: their queueing limit (minutes, 1 to a week)",
    )
    mlflow_tracking_uri: Uri = Field(default="", description="MLFLOW_TRACKING_URI")
    mlflow_experiment: Name = Field(default=DEFAULT_EXPERIMENT, description="MLFLOW_EXPERIMENT")
    mlflow_credentials_secret_arn: Uri = Field(default="", description="MLFLOW_CREDENTIALS_SECRET_ARN (optional)")
    results_topic_arn: Uri = Field(default="", description="RESULTS_TOPIC_ARN: SNS topic for email and Slack")
    slack_webhook_secret_arn: Uri = Field(default="", description="SLACK_WEBHOOK_SECRET_ARN")
    job_env: dict[Name, SettingText] = Field(
        default_factory=dict,
        max_length=128,
        description="JOB_ENV: JSON object of extra environment variables for every Job",
    )
    region: Name = Field(default="", description="AWS_REGION: passed to Jobs so their callbacks reach Step Functions")
    report_html: Uri = Field(
        default="",
        description="REPORT_HTML: a local report.html the summary links instead of a presigned URL (embedded default)",
    )
    rerun_command: str = Field(
        default="",
        description="RERUN_COMMAND: what a failure notice tells people to run once the cause is fixed (embedded "
        "default: the user's own command); empty: rlinf-bench trigger --rerun, for a deployed stack",
    )
    notified_log: str = Field(
        default="",
        description="NOTIFIED_LOG: a local JSON file of the summaries sent; one already in it is not sent again "
        "(embedded default)",
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> PipelineSettings:
        """Read the variables named in each field's description; a malformed value names the variable."""
        raw_job_env = env.get("JOB_ENV", "").strip()
        try:
            job_env = json.loads(raw_job_env) if raw_job_env else {}
        except json.JSONDecodeError as exc:
            raise ConfigError(f'JOB_ENV is not a JSON object: {exc}; write e.g. \'{{"KEY": "value"}}\'') from exc
        try:
            return cls(
                results_prefix=env.get("RESULTS_PREFIX", ""),
                compute=env.get("COMPUTE", ""),
                eval_image=env.get("EVAL_IMAGE", ""),
                probe_image=env.get("PROBE_IMAGE", ""),
                namespace=env.get("NAMESPACE", ""),
                kueue_queue=env.get("KUEUE_QUEUE", ""),
                kueue_priority_class=env.get("KUEUE_PRIORITY_CLASS", ""),
                kueue_queue_limit_min=int(
                    env_number(
                        env, "KUEUE_QUEUE_LIMIT_MIN", low=1, high=MAX_QUEUE_LIMIT_MIN, unit="minutes", whole=True
                    )
                    or 120
                ),
                mlflow_tracking_uri=env.get("MLFLOW_TRACKING_URI", ""),
                mlflow_experiment=env.get("MLFLOW_EXPERIMENT", "") or DEFAULT_EXPERIMENT,
                mlflow_credentials_secret_arn=env.get("MLFLOW_CREDENTIALS_SECRET_ARN", ""),
                results_topic_arn=env.get("RESULTS_TOPIC_ARN", ""),
                slack_webhook_secret_arn=env.get("SLACK_WEBHOOK_SECRET_ARN", ""),
                job_env=job_env,
                region=env.get("AWS_REGION", "") or env.get("AWS_DEFAULT_REGION", ""),
                report_html=env.get("REPORT_HTML", ""),
                rerun_command=env.get("RERUN_COMMAND", ""),
                notified_log=env.get("NOTIFIED_LOG", ""),
            )
        except ValidationError as exc:
            lines = [f"  - {_variable(err['loc'])}: {err['msg']}" for err in exc.errors()]
            raise ConfigError("workflow settings from the environment are invalid:\n" + "\n".join(lines)) from exc

    def require(self, *fields: str) -> None:
        """Raise ConfigError naming every one of ``fields`` that is empty (as its environment variable)."""
        missing = [f.upper() for f in fields if not getattr(self, f)]
        if missing:
            raise ConfigError(
                f"missing environment variable(s) {', '.join(missing)}; the SAM template sets them, "
                "or export them for a local run"
            )


def _variable(loc: tuple[int | str, ...]) -> str:
    """The environment variable a settings field is read from (its description starts with the name)."""
    field = PipelineSettings.model_fields.get(str(loc[0])) if loc else None
    description = (field.description or "") if field else ""
    name = description.split(":", 1)[0].split(" ", 1)[0]
    return name if name.isupper() else ".".join(str(p) for p in loc)
