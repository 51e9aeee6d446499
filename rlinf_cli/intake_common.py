"""Options and plumbing shared by the intake commands (trigger, backfill)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from rlinf_bench.errors import ConfigError

STATE_MACHINE_ENV = ("RLINF_BENCH_STATE_MACHINE_ARN", "STATE_MACHINE_ARN")


def add_intake_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--state-machine-arn",
        default="",
        help="evaluation state machine (default: $RLINF_BENCH_STATE_MACHINE_ARN or $STATE_MACHINE_ARN)",
    )
    p.add_argument(
        "--config",
        default=os.environ.get("INTAKE_CONFIG", ""),
        help="intake config: ssm:/name, s3://bucket/key or a YAML/JSON file (default: $INTAKE_CONFIG, else built-in)",
    )
    p.add_argument("--quiet-period", type=float, default=None, metavar="SECONDS", help="override quiet_period_s")
    p.add_argument("--region", default=None, help="AWS region (default: the AWS SDK's)")
    p.add_argument("--dry-run", action="store_true", help="check and print, start nothing")
    p.add_argument("--json", action="store_true", help="print JSON")


def intake_config(args: argparse.Namespace, clients: Clients) -> Any:
    """The intake config named by --config (built-in defaults otherwise), with --quiet-period applied."""
    from rlinf_aws.s3_objects import S3Objects
    from rlinf_aws.ssm_parameters import SsmParameters
    from rlinf_bench.intake.config import load_intake_config

    config = load_intake_config(
        args.config,
        parameters=SsmParameters(factory=lambda: clients("ssm")),
        objects=S3Objects(factory=lambda: clients("s3")),
    )
    if args.quiet_period is not None:
        config = config.model_copy(update={"quiet_period_s": args.quiet_period})
    return config


def state_machine_arn(args: argparse.Namespace) -> str:
    arn = args.state_machine_arn or next((os.environ[n] for n in STATE_MACHINE_ENV if os.environ.get(n)), "")
    if not arn and not args.dry_run:
        raise ConfigError(
            "no state machine: pass --state-machine-arn or set RLINF_BENCH_STATE_MACHINE_ARN to the SAM stack's "
            "output EvaluationStateMachineArn (aws cloudformation describe-stacks --stack-name rlinf-bench --query "
            "\"Stacks[0].Outputs[?OutputKey=='EvaluationStateMachineArn'].OutputValue\" --output text), "
            "or use --dry-run"
        )
    return arn


class Clients:
    """boto3 clients built on first use, so local --dry-run runs need no AWS setup."""

    def __init__(self, region: str | None) -> None:
        self._region = region
        self._made: dict[str, Any] = {}

    def __call__(self, service: str) -> Any:
        if service not in self._made:
            import boto3

            self._made[service] = boto3.client(service, region_name=self._region)
        return self._made[service]
