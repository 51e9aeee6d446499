"""The embedded default: template.yaml's stack in moto, the real handlers, local Jobs, outputs under DIR.

One :class:`Embedded` is one private account with the stack deployed. Putting a checkpoint into its
bucket starts the same chain as on AWS: S3 -> EventBridge -> SQS -> (poller) router -> Step Functions
(moto's engine executes the ASL) -> job_submitter -> Jobs as local subprocesses (LocalExecutor) that
call back -> aggregator -> publisher (MLflow, SNS) -> email queue and slack_notifier -> outbox files.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.errors import ConfigError
from rlinf_bench.reporting.text_safety import plain
from rlinf_local.aws import LocalAws, local_aws
from rlinf_local.inputs import LocalCheckpoint
from rlinf_local.lambda_log import LambdaLogLine
from rlinf_local.lambdas import load_app
from rlinf_local.local_executor import LocalExecutor
from rlinf_local.outbox import EmailOutbox, SlackOutbox
from rlinf_local.sqs_poller import SqsPoller
from rlinf_local.stack import (
    REPO,
    Adaptation,
    LocalStack,
    StackParameters,
    deploy_stack,
    function_folders,
    transformed_template,
)
from rlinf_tracking.local_store import prepare_sqlite_store

__all__ = ["Embedded"]

log = logging.getLogger(__name__)
CONFIG_KEY = "config/intake.yaml"
RESULTS = "results/"
Echo = Callable[[str], None]


def progress_line(text: str) -> None:
    """A line about what the flow is doing (uploaded, started, finished): stderr, so stdout carries results only."""
    print(text, file=sys.stderr, flush=True)


def _logs_to_stderr(module: ModuleType) -> None:
    """A Lambda module's Powertools logger writes JSON lines to stdout (CloudWatch reads them there); on a
    terminal they are library logs, so they go to stderr beside the other logs and leave stdout to results,
    as one readable line each (:class:`LambdaLogLine`)."""
    handler = getattr(getattr(module, "logger", None), "registered_handler", None)
    if isinstance(handler, logging.StreamHandler):
        handler.setStream(sys.stderr)
        handler.setFormatter(LambdaLogLine())


class Embedded:
    """Deploy on enter; :meth:`put_checkpoint`, :meth:`route`, :meth:`wait`; everything stops on exit."""

    def __init__(
        self,
        out: Path,
        *,
        config_text: str = "",
        tracking_uri: str = "",
        quiet_period_s: float = 0.0,
        max_parallel: int = 2,
        echo: Echo = progress_line,
        progress: bool = True,
        rerun_command: str = "",
    ) -> None:
        self.out = out.resolve()
        # What a failure notice tells people to run once the cause is fixed: the user's own command (a deployed
        # stack's `rlinf-bench trigger --rerun` means nothing here).
        self.rerun_command = rerun_command or f"the same rlinf-bench command again, with --out {self.out}"
        self.config_text = config_text
        self.tracking_uri = tracking_uri or f"sqlite:///{self.out / 'mlflow.db'}"
        self.quiet_period_s = quiet_period_s
        self.echo = echo
        self.show_progress = progress  # live progress on stderr; off under --json
        self.executor = LocalExecutor(self.out / "jobs", max_parallel=max_parallel, cwd=REPO)
        self.modules: dict[str, ModuleType] = {}
        #: <bucket>/<key prefix> -> the folder each checkpoint was uploaded from (failures name that folder)
        self.uploaded_from: dict[str, Path] = {}
        self._stack = ExitStack()
        self.aws: LocalAws
        self.stack: LocalStack
        self.email: EmailOutbox
        self.slack: SlackOutbox
        self.poller: SqsPoller

    # -- set-up ----------------------------------------------------------------------------------
    def __enter__(self) -> Embedded:
        self.out.mkdir(parents=True, exist_ok=True)
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self._stack.close()

    def _start(self) -> None:
        progress_line(
            "starting the local stack: template.yaml through samtranslator into a private moto account, "
            "the Lambda handlers in this process"
        )
        template = transformed_template()  # before moto starts: a missing tool fails fast
        prepare_sqlite_store(self.tracking_uri)  # a new local store from the migrated template, not from scratch
        self.aws = self._stack.enter_context(local_aws())
        self._stack.callback(self.executor.shutdown)
        self.slack = SlackOutbox(self.out / "outbox" / "slack")
        self._stack.callback(self.slack.close)
        # moto's CloudFormation skips AWS::SecretsManager::Secret: the secret is made here and passed in.
        secret = self.aws.client("secretsmanager").create_secret(
            Name="rlinf-bench/slack-webhook", SecretString=self.slack.url
        )["ARN"]
        http_uri = self.tracking_uri if self.tracking_uri.startswith(("http://", "https://")) else ""
        bucket = "rlinf-checkpoints"
        params = StackParameters(
            mlflow_tracking_uri=http_uri or "http://127.0.0.1:5000",
            intake_config=f"s3://{bucket}/{CONFIG_KEY}" if self.config_text else "",
            quiet_period_s=self.quiet_period_s,
            slack_secret_arn=secret,
            bucket=bucket,
        )
        self.stack = deploy_stack(self.aws.client, params, template)
        self.stack.adaptations += self._local_adaptations(http_uri)
        s3 = self.aws.client("s3")
        if self.config_text:
            s3.put_object(Bucket=self.stack.bucket, Key=CONFIG_KEY, Body=self.config_text.encode())
        self._restore_results()
        self._load_functions(http_uri)
        sns = self.aws.client("sns")
        slack_name = self.stack.functions["SlackNotifierFunction"][0]
        slack_arn = self.aws.client("lambda").get_function_configuration(FunctionName=slack_name)["FunctionArn"]
        sns.subscribe(TopicArn=self.stack.topic_arn, Protocol="lambda", Endpoint=slack_arn)
        self.email = EmailOutbox.subscribe(
            self.out / "outbox" / "email", self.aws.client("sqs"), sns, self.stack.topic_arn
        )
        router = self.modules["checkpoint_router"]
        self.poller = SqsPoller(self.aws.client("sqs"), self.stack.intake_queue_url, router.lambda_handler)

    def _local_adaptations(self, http_uri: str) -> list[Adaptation]:
        changes = [
            Adaptation(
                "Slack webhook secret created by API, holding a loopback webhook that writes DIR/outbox/slack/",
                "moto's CloudFormation skips AWS::SecretsManager::Secret",
            ),
            Adaptation(
                "email: an SQS queue subscribed to the results topic; each message becomes DIR/outbox/email/*.txt",
                "no mail server here",
            ),
            Adaptation("COMPUTE=local:DIR/jobs for the submitter and the notifier", "Jobs run as local subprocesses"),
            Adaptation("JOB_ENV: the moto endpoint and dummy credentials", "Jobs call back to the local account"),
            Adaptation("images are placeholder digests", "the LocalExecutor runs the Job command with this venv"),
            Adaptation(
                "REPORT_HTML=DIR/report/report.html: the summary links that page",
                "a presigned URL of the local bucket points into a moto server that is gone after the run",
            ),
            Adaptation(
                "NOTIFIED_LOG=DIR/outbox/sent.json: a summary already sent from DIR is not sent again",
                "a resumed or repeated run in DIR aggregates the same runs again",
            ),
        ]
        if not http_uri:
            changes.append(
                Adaptation(
                    f"MLFLOW_TRACKING_URI={self.tracking_uri}",
                    "the template asks for an http(s) server; the embedded default keeps a local store",
                )
            )
        return changes

    def _load_functions(self, http_uri: str) -> None:
        overrides = {
            "COMPUTE": f"local:{self.out / 'jobs'}",
            "MPLCONFIGDIR": str(self.out / ".matplotlib"),
        }
        always = {
            "JOB_ENV": json.dumps(self.aws.job_env),
            "AWS_REGION": "us-east-1",
            # One line per invocation at INFO would bury the progress; warnings and errors still show.
            "POWERTOOLS_LOG_LEVEL": os.environ.get("RLINF_BENCH_LAMBDA_LOG_LEVEL", "WARNING"),
            # The summary links the report a person can open here: the page each run leaves in DIR/report/
            # (a presigned URL of the local bucket would point into a moto server gone after the run).
            "REPORT_HTML": str(self.out / "report" / "report.html"),
            "RERUN_COMMAND": f"{self.rerun_command} (finished runs are kept)",
            # A resumed or repeated run in DIR sends a summary it already sent (same checkpoint, same content) once.
            "NOTIFIED_LOG": str(self.out / "outbox" / "sent.json"),
        }
        folders = function_folders()
        for logical, (name, env) in self.stack.functions.items():
            folder = folders[logical]
            # Settings the template gives a function are replaced for local use; it gets no new ones but these.
            env = {**env, **{k: v for k, v in overrides.items() if k in env}, **always}
            if "MLFLOW_TRACKING_URI" in env and not http_uri:
                env["MLFLOW_TRACKING_URI"] = self.tracking_uri
            module = load_app(REPO / "functions" / folder / "app.py", f"_rlinf_local_{folder}_{id(self)}", env)
            _logs_to_stderr(module)
            if hasattr(module, "CLIENTS"):
                module.CLIENTS.submitter_factory = lambda: self.executor
            self.modules[folder] = module
            dlq = self.stack.slack_dlq_url if folder == "slack_notifier" else ""
            self.aws.lambdas.register(name, module.lambda_handler, dead_letter_queue_url=dlq)

    # -- the flow ----------------------------------------------------------------------------------
    def put_checkpoint(self, ckpt: LocalCheckpoint) -> str:
        """Upload the checkpoint's files (last file last), as FSx's export would; returns its S3 URI."""
        s3 = self.aws.client("s3")
        for path in ckpt.files():
            key = f"{ckpt.key_prefix}/{path.relative_to(ckpt.path).as_posix()}"
            s3.upload_file(str(path), self.stack.bucket, key)
        self.uploaded_from[f"{self.stack.bucket}/{ckpt.key_prefix}"] = ckpt.path
        return f"s3://{self.stack.bucket}/{ckpt.key_prefix}"

    def executions(self) -> dict[str, str]:
        """name -> ARN of every execution of the state machine."""
        sfn = self.aws.client("stepfunctions")
        found = sfn.list_executions(stateMachineArn=self.stack.state_machine_arn)["executions"]
        return {e["name"]: e["executionArn"] for e in found}

    def route(self) -> None:
        """Hand what is in the intake queue to the router once; deferred checkpoints come back later."""
        self.poller.release()
        self.poller.drain()

    def route_until_started(self, known: set[str], *, timeout_s: float = 120.0) -> dict[str, str]:
        """Poll the intake queue until at least one new execution exists; name -> ARN of the new ones."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.route()
            new = {n: a for n, a in self.executions().items() if n not in known}
            if new:
                return new
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"the router started no evaluation within {timeout_s:.0f} s; dead letters: {self.dead_letters()}"
                )
            time.sleep(1.0)

    def execution_ended(self, arn: str) -> list[str]:
        """Tell the router an execution ended, as the template's ExecutionEnded rule does on AWS (moto's Step
        Functions sends no status-change events): the backlog frees its slot and releases held checkpoints.
        Returns the checkpoint URIs released; nothing without a backlog policy."""
        sfn = self.aws.client("stepfunctions")
        described = sfn.describe_execution(executionArn=arn)
        event = {
            "source": "aws.states",
            "detail-type": "Step Functions Execution Status Change",
            "detail": {"status": described["status"], "executionArn": arn, "input": described["input"]},
        }
        answer = self.modules["checkpoint_router"]._handle(event, None)
        return [str(u) for u in answer.get("released", [])]

    def save_backlog(self) -> None:
        """Copy the backlog's decisions from the (moto) table to DIR/backlog.json for ``status`` and the report."""
        from rlinf_local.backlog_status import save_backlog, table_backlog

        table = self.stack.functions["CheckpointRouterFunction"][1]["IDEMPOTENCY_TABLE"]
        save_backlog(self.out, table_backlog(self.aws.client("dynamodb"), table))

    def dead_letters(self) -> list[str]:
        from rlinf_local.intake_resources import read_dead_letters

        return [f"{d['reason']}" for d in read_dead_letters(self.aws.client("sqs"), self.stack.intake_dlq_url)]

    def wait(self, arn: str, *, poll_s: float = 1.0, on_poll: Callable[[], None] | None = None) -> str:
        """Block until the execution ends; returns its status. Outbox files are written as messages arrive;
        ``on_poll`` (progress) is called after each poll while it runs."""
        sfn = self.aws.client("stepfunctions")
        while True:
            status = str(sfn.describe_execution(executionArn=arn)["status"])
            self.email.drain()
            if status != "RUNNING":
                return status
            if on_poll is not None:
                on_poll()
            time.sleep(poll_s)

    def interrupt(self, arn: str) -> None:
        """Stop the Jobs, then the execution; what finished is saved by :meth:`save_results`."""
        self.executor.shutdown()
        try:
            self.aws.client("stepfunctions").stop_execution(
                executionArn=arn, error="Interrupted", cause="Ctrl-C: stopped by the user; run the command again"
            )
        except Exception as exc:  # the execution may have ended meanwhile
            log.info("stop_execution: %s", exc)

    # -- state kept under DIR ----------------------------------------------------------------------
    def save_results(self) -> None:
        """Copy s3://bucket/results/ to DIR/results/, so a later run resumes from the finished runs. A key is a
        name a Job chose: one with an empty, ``.`` or ``..`` segment would land outside DIR/results and is skipped."""
        objects = S3Objects(self.aws.client("s3"))
        for obj in objects.list_prefix(self.stack.bucket, RESULTS):
            if any(part in ("", ".", "..") for part in obj.key.split("/")):
                log.warning("results object %r not saved: its key is not a plain path", plain(obj.key)[:300])
                continue
            target = self.out / obj.key
            target.parent.mkdir(parents=True, exist_ok=True)
            objects.download_object(self.stack.bucket, obj.key, target)

    def _restore_results(self) -> None:
        root = self.out / "results"
        if not root.is_dir():
            return
        s3 = self.aws.client("s3")
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            s3.upload_file(str(path), self.stack.bucket, path.relative_to(self.out).as_posix())

    @property
    def results_prefix(self) -> str:
        """Where every execution of this stack writes its results: the only place a report may name files in."""
        return f"s3://{self.stack.bucket}/{RESULTS.rstrip('/')}"

    def read_json(self, uri: str) -> Any:
        """A JSON document from the local bucket (a report, a result)."""
        bucket, key = uri.removeprefix("s3://").split("/", 1)
        body = self.aws.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
        return json.loads(body)
