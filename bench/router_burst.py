"""A burst of S3 events through the real checkpoint_router handler: throughput, per-record cost, exactly-once.

20 RLinf FSDP checkpoints (64 DCP shards, .metadata, full_weights.pt, directory markers) are put in a
moto bucket. Every object's event is delivered several times, in both notification shapes, shuffled
across checkpoints, in SQS batches of 10, to the handler that Lambda runs (Powertools batch
processing, DynamoDB idempotency, S3 listing, Step Functions start, all against in-process moto).
That is the worst case: no EventBridge rule filtering, so the router itself must discard shard
events cheaply. It reports events per second, the per-record routing time (p50/p99, split into
filtered-out records and last-file records), the executions started (must equal the checkpoints),
and the handler module's cold import time (``python -X importtime -c "import app"``).

Goals (docs/performance.md): cold import < 0.5 s; < 2 ms handler time per filtered-out record.

Run: ``.venv/bin/python bench/router_burst.py [--checkpoints 20 --duplicates 8]``; writes
``bench/results/router_burst.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as bench/router_burst.py from anywhere

from rlinf_aws.router_lambda import build_router, make_handler
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Outcome, RecordResult, Router
from rlinf_local.intake_resources import create_intake_stack
from rlinf_local.sqs_poller import LocalLambdaContext
from tests.synthetic_checkpoints import fsdp_objects

REPO = Path(__file__).resolve().parents[1]
APP_DIR = REPO / "functions" / "checkpoint_router"
REGION = "us-east-1"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cold_import_s(runs: int = 5) -> dict[str, Any]:
    """Cumulative import time of ``app`` reported by ``-X importtime`` in fresh interpreters."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO),
        "AWS_DEFAULT_REGION": REGION,
        "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:bench",
        "IDEMPOTENCY_TABLE": "bench",
        "DEAD_LETTER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/bench-dlq",
    }
    totals = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import app"],
            cwd=APP_DIR,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(ln for ln in reversed(out.stderr.splitlines()) if re.search(r"\|\s*app\s*$", ln))
        totals.append(int(line.split("|")[1]) / 1e6)
    return {"runs_s": totals, "median_s": statistics.median(totals), "min_s": min(totals)}


def event_body(bucket: str, key: str, size: int, classic: bool) -> str:
    if classic:
        rec = {
            "eventName": "ObjectCreated:Put",
            "s3": {"bucket": {"name": bucket}, "object": {"key": key, "size": size}},
        }
        return json.dumps({"Records": [rec]})
    return json.dumps(
        {
            "source": "aws.s3",
            "detail-type": "Object Created",
            "time": datetime.now(UTC).isoformat(),
            "detail": {"bucket": {"name": bucket}, "object": {"key": key, "size": size}},
        }
    )


def sqs_record(body: str) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": "bench",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": str(int(time.time() * 1000))},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:bench",
        "awsRegion": REGION,
    }


def run_burst(checkpoints: int, ranks: int, duplicates: int, seed: int) -> dict[str, Any]:
    stack = create_intake_stack(boto3.client, region=REGION, eventbridge=False)
    s3 = boto3.client("s3")
    bodies: list[str] = []
    rng = random.Random(seed)
    for i in range(checkpoints):
        root = f"runs/openvla-libero10/checkpoints/global_step_{(i + 1) * 25}"
        for relative, size in fsdp_objects(ranks, metadata_at=rng.choice(["first", "middle", "last"])):
            key = f"{root}/{relative}"
            s3.put_object(Bucket=stack.bucket, Key=key, Body=b"\0" * size)
            bodies += [event_body(stack.bucket, key, size, classic=d % 2 == 1) for d in range(duplicates)]
    rng.shuffle(bodies)

    results: list[RecordResult] = []
    route_times: list[tuple[float, Outcome]] = []
    offset = timedelta(hours=1)  # every checkpoint's quiet period is over

    def timed(router: Router) -> Router:
        original = router.route

        def route(body: str, *, first_seen: datetime | None = None) -> list[RecordResult]:
            t0 = time.perf_counter()
            out = original(body, first_seen=first_seen)
            route_times.append((time.perf_counter() - t0, out[0].outcome))
            return out

        router.route = route  # type: ignore[method-assign]
        return router

    def build() -> Any:
        router, idem = build_router(
            stack.settings(),
            boto3.client,
            clock=lambda: datetime.now(UTC) + offset,
            observer=results.append,
            config=IntakeConfig(quiet_period_s=60),
        )
        return timed(router), idem

    handler = make_handler(build)
    context = LocalLambdaContext()
    # The first invocation builds the clients and the router (cold start): not part of the burst.
    handler({"Records": [sqs_record(event_body(stack.bucket, "warmup/", 0, classic=False))]}, context)
    results.clear()
    route_times.clear()
    failures = 0
    t0 = time.perf_counter()
    for start in range(0, len(bodies), 10):
        response = handler({"Records": [sqs_record(b) for b in bodies[start : start + 10]]}, context)
        failures += len(response["batchItemFailures"])
    wall = time.perf_counter() - t0
    burst_results, burst_times = list(results), list(route_times)

    # Whole-handler cost of records the router filters out (Powertools batch processing included),
    # timed per batch of 10 shard events.
    shard_bodies = [b for b in bodies if ".distcp" in b][:2000]
    per_record_filtered = []
    for start in range(0, len(shard_bodies), 10):
        batch = {"Records": [sqs_record(b) for b in shard_bodies[start : start + 10]]}
        t1 = time.perf_counter()
        handler(batch, context)
        per_record_filtered.append((time.perf_counter() - t1) / len(batch["Records"]) * 1e3)

    sfn = boto3.client("stepfunctions")
    executions = sfn.list_executions(stateMachineArn=stack.state_machine_arn)["executions"]
    filtered = [t * 1e3 for t, o in burst_times if o in (Outcome.FILTERED, Outcome.IGNORED)]
    triggers = [t * 1e3 for t, o in burst_times if o not in (Outcome.FILTERED, Outcome.IGNORED)]
    counts: dict[str, int] = {}
    for r in burst_results:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    return {
        "events": len(bodies),
        "checkpoints": checkpoints,
        "objects_per_checkpoint": len(fsdp_objects(ranks)),
        "duplicates_per_event": duplicates,
        "batch_size": 10,
        "wall_s": wall,
        "events_per_s": len(bodies) / wall,
        "handler_ms_per_record_mean": wall / len(bodies) * 1e3,
        "filtered_handler_ms_per_record": {
            "p50": percentile(per_record_filtered, 0.5),
            "p99": percentile(per_record_filtered, 0.99),
            "batches": len(per_record_filtered),
        },
        "filtered_record_ms": {"p50": percentile(filtered, 0.5), "p99": percentile(filtered, 0.99), "n": len(filtered)},
        "last_file_record_ms": {
            "p50": percentile(triggers, 0.5),
            "p99": percentile(triggers, 0.99),
            "n": len(triggers),
        },
        "all_records_ms": {
            "p50": percentile([t * 1e3 for t, _ in burst_times], 0.5),
            "p99": percentile([t * 1e3 for t, _ in burst_times], 0.99),
        },
        "outcomes": counts,
        "batch_item_failures": failures,
        "executions_started": len(executions),
        "distinct_execution_names": len({e["name"] for e in executions}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=20)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--duplicates", type=int, default=8, help="deliveries of each object's event")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "router_burst.json"))
    args = parser.parse_args()

    os.environ.update({"AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"})
    cold = cold_import_s()
    with mock_aws():
        burst = run_burst(args.checkpoints, args.ranks, args.duplicates, args.seed)
    result = {
        "benchmark": "router_burst",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "cold_import": cold,
        "burst": burst,
        "goals": {
            "cold_import_lt_0_5_s": cold["median_s"] < 0.5,
            "filtered_record_p99_lt_2_ms": burst["filtered_handler_ms_per_record"]["p99"] < 2.0,
            "executions_equal_checkpoints": burst["executions_started"] == args.checkpoints,
        },
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if all(result["goals"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
