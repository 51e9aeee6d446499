"""The embedded default: the AWS flow of rlinf-bench on one machine, with no cloud account.

moto stands in for S3, EventBridge, SQS, Step Functions (which really executes the ASL), SNS and
Secrets Manager; the Lambda handlers under functions/ run in this process; Jobs run as local
subprocesses. It reaches eval_runner and infra_probes only through the Jobs' command lines.
"""
