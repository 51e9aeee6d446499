"""The workflow Lambdas' environment, read once per container (the SAM template sets every variable)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_bench.errors import ConfigError

__all__ = ["PipelineSettings"]

DEFAULT_EXPERIMENT = "RLinf"


class PipelineSettings(BaseModel):
    """What the workflow's functions need besides their input: where results go, where Jobs run,
    where verdicts are published. Empty strings mean "not configured" and are checked where used,
    so a function only fails for the settings it needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    results_prefix: str = Field(default="", description="RESULTS_PREFIX: s3://bucket/results or a folder")
    compute: str = Field(default="", description="COMPUTE: eks:CLUSTER@REGION | kubeconfig:... | local:DIR")
    eval_image: str = Field(default="", description="EVAL_IMAGE: used when the request names none")
    probe_image: str = Field(default="", description="PROBE_IMAGE: used when the request names none")
    namespace: str = Field(default="", description="NAMESPACE: where Jobs run (the stack's RBAC is scoped to it)")
    kueue_queue: str = Field(default="", description="KUEUE_QUEUE: LocalQueue for requests naming none; empty: off")
    kueue_priority_class: str = Field(default="", description="KUEUE_PRIORITY_CLASS: their WorkloadPriorityClass")
    kueue_queue_limit_min: int = Field(default=120, ge=1, description="KUEUE_QUEUE_LIMIT_MIN: their queueing limit")
    mlflow_tracking_uri: str = Field(default="", description="MLFLOW_TRACKING_URI")
    mlflow_experiment: str = Field(default=DEFAULT_EXPERIMENT, description="MLFLOW_EXPERIMENT")
    mlflow_credentials_secret_arn: str = Field(default="", description="MLFLOW_CREDENTIALS_SECRET_ARN (optional)")
    results_topic_arn: str = Field(default="", description="RESULTS_TOPIC_ARN: SNS topic for email and Slack")
    slack_webhook_secret_arn: str = Field(default="", description="SLACK_WEBHOOK_SECRET_ARN")
    job_env: dict[str, str] = Field(
        default_factory=dict, description="JOB_ENV: JSON object of extra environment variables for every Job"
    )
    region: str = Field(default="", description="AWS_REGION: passed to Jobs so their callbacks reach Step Functions")
    report_html: str = Field(
        default="",
        description="REPORT_HTML: a local report.html the summary links instead of a presigned URL (embedded default)",
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
                kueue_queue_limit_min=env.get("KUEUE_QUEUE_LIMIT_MIN", "") or 120,
                mlflow_tracking_uri=env.get("MLFLOW_TRACKING_URI", ""),
                mlflow_experiment=env.get("MLFLOW_EXPERIMENT", "") or DEFAULT_EXPERIMENT,
                mlflow_credentials_secret_arn=env.get("MLFLOW_CREDENTIALS_SECRET_ARN", ""),
                results_topic_arn=env.get("RESULTS_TOPIC_ARN", ""),
                slack_webhook_secret_arn=env.get("SLACK_WEBHOOK_SECRET_ARN", ""),
                job_env=job_env,
                region=env.get("AWS_REGION", "") or env.get("AWS_DEFAULT_REGION", ""),
                report_html=env.get("REPORT_HTML", ""),
                notified_log=env.get("NOTIFIED_LOG", ""),
            )
        except ValidationError as exc:
            raise ConfigError(f"workflow settings from the environment are invalid: {exc}") from exc

    def require(self, *fields: str) -> None:
        """Raise ConfigError naming every one of ``fields`` that is empty (as its environment variable)."""
        missing = [f.upper() for f in fields if not getattr(self, f)]
        if missing:
            raise ConfigError(
                f"missing environment variable(s) {', '.join(missing)}; the SAM template sets them, "
                "or export them for a local run"
            )
