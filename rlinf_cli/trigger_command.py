"""``rlinf-bench trigger CHECKPOINT``: evaluate one checkpoint by hand (``--checkpoint`` is an alias).

The same checks as the event path (layout, completeness, quiet period) and the same deterministic
execution name, so a manual trigger and a late S3 event never start two evaluations.
"""

from __future__ import annotations

import argparse
import json

from rlinf_cli.intake_common import Clients, add_intake_options, intake_config, state_machine_arn
from rlinf_clikit.arguments import add_target_argument, target_of
from rlinf_clikit.help_format import ExampleFormatter


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "trigger",
        help="evaluate one checkpoint now (completeness check + start the execution)",
        description="Start the evaluation of one checkpoint on a deployed stack, as an S3 event would: the same "
        "layout, completeness and quiet-period checks, and the same execution name, so a manual trigger and a late "
        "event never start two evaluations. On one machine, without a stack: rlinf-bench pipeline CHECKPOINT --out DIR.",
        epilog="example: rlinf-bench trigger s3://bucket/runs/exp/checkpoints/global_step_400 --state-machine-arn ARN",
        formatter_class=ExampleFormatter,
    )
    add_target_argument(
        p, "checkpoint", metavar="CHECKPOINT", help="s3://bucket/.../global_step_N or a local directory"
    )
    add_intake_options(p)
    p.add_argument(
        "--rerun",
        action="store_true",
        help="start the next attempt of this checkpoint and eval matrix (after a failed one); finished runs are kept",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlinf_aws.execution_starter import ExecutionStarter
    from rlinf_aws.s3_objects import S3Objects
    from rlinf_bench.checkpoints.completeness import check_completeness
    from rlinf_bench.checkpoints.keys import ref_from_root_uri
    from rlinf_bench.checkpoints.listing import CheckpointLister
    from rlinf_bench.errors import CheckpointNotReadyError

    checkpoint = str(target_of(args, "checkpoint"))
    clients = Clients(args.region)
    config = intake_config(args, clients)
    arn = state_machine_arn(args)
    ref = ref_from_root_uri(checkpoint, patterns=config.patterns)
    lister = CheckpointLister(S3Objects(factory=lambda: clients("s3")))
    verdict = check_completeness(ref.uri, lister, quiet_period_s=config.quiet_period_s)
    if not verdict.complete:
        raise CheckpointNotReadyError(f"{verdict.reason}; run trigger again once the export has finished")
    request = config.request_for(ref.model_copy(update={"layout": verdict.layout or ref.layout}))
    if args.dry_run:
        print(request.to_json())
        return 0
    starter = ExecutionStarter(clients("stepfunctions"), arn)
    result = starter.rerun(request) if args.rerun else starter.start(request)
    if args.json:
        print(json.dumps({**result.to_dict(), "checkpoint": request.checkpoint.model_dump(mode="json")}, indent=2))
    elif result.already_started:
        print(f"already started: {result.execution_arn}")
    else:
        print(f"started {result.name}: {result.execution_arn}")
    return 0
