"""State transitions, Lambda invocations and Step Functions cost of evaluating one checkpoint.

Runs the real ASL in moto's engine with the real handlers in-process and Jobs that call back (the
workflow tests' harness), for 4 LIBERO suites x 3 runs + 5 probes, at two Job durations (one 10x the
other). Callbacks, not polling: the counts must not depend on how long the Jobs take.

    .venv/bin/python bench/workflow_transitions.py
Writes bench/results/workflow_transitions.json.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for key, value in {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}.items():
    os.environ.setdefault(key, value)

from moto import mock_aws  # noqa: E402

from rlinf_aws.execution_names import execution_name  # noqa: E402
from rlinf_bench.contracts import EvalRequest, ProbeSpec, SuiteSelection  # noqa: E402
from rlinf_local.moto_patches import moto_fixes  # noqa: E402
from tests.integration.workflow.harness import FakeJobs, WorkflowStack  # noqa: E402
from tests.integration.workflow.test_state_machine import ckpt, results_for  # noqa: E402

USD_PER_TRANSITION = 0.025 / 1000  # Standard workflows, list price (REFERENCE.md section 4)
SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")
PROBES = ("gpu", "nccl", "storage", "checkpoint_io", "throughput")
OUT = ROOT / "bench" / "results" / "workflow_transitions.json"


def measure(duration_s: float) -> dict[str, object]:
    request = EvalRequest(
        checkpoint=ckpt(100),
        suites=[SuiteSelection(name=s, tasks=[0]) for s in SUITES],
        runs=3,
        trials_per_task=4,
        probes=[ProbeSpec(name=p) for p in PROBES],
        baselines=["libero/openvla-oft-rlinf"],
    )
    jobs = FakeJobs(make_result=results_for(100, 0.5), duration_s=duration_s)
    stack = WorkflowStack(jobs=jobs)
    moto_config = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
    with mock_aws(config=moto_config), moto_fixes(), stack.lambdas.installed():
        stack.deploy()
        start = time.perf_counter()
        desc = stack.run(request.to_json(), execution_name(request), timeout_s=600)
        wall = time.perf_counter() - start
        events = stack.history(desc["executionArn"])
    if desc["status"] != "SUCCEEDED":
        raise SystemExit(f"the execution ended {desc['status']}")
    entered = [e for e in events if e["type"].endswith("StateEntered")]
    invocations = {k: v for k, v in stack.lambdas.invocations.items() if "slack" not in k}
    return {
        "job_duration_s": duration_s,
        "wall_s": round(wall, 2),
        "jobs": len(jobs.submitted),
        "transitions": len(entered),
        "lambda_invocations": sum(invocations.values()),
        "lambda_invocations_by_function": invocations,
        "slack_notifier_invocations": stack.lambdas.invocations.get("rlinf-slack-notifier", 0),
    }


def main() -> None:
    short, long = measure(0.3), measure(3.0)
    result = {
        "transitions": {"short": short["transitions"], "long": long["transitions"]},
        "lambda_invocations": short["lambda_invocations"],
        "usd_per_checkpoint": round(float(short["transitions"]) * USD_PER_TRANSITION, 6),  # type: ignore[arg-type]
        "goal": {"transitions_max": 60, "same_at_both_durations": True},
        "setup": {
            "suites": len(SUITES),
            "runs": 3,
            "probes": len(PROBES),
            "engine": "moto Step Functions (ASL executed)",
        },
        "runs": {"short": short, "long": long},
        "command": "python bench/workflow_transitions.py",
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("transitions", "lambda_invocations", "usd_per_checkpoint")}, indent=2))


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
