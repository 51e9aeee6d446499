"""The light Lambdas stay light: their layer has no numpy, mlflow or torch, so their code must not import them."""

from __future__ import annotations

import subprocess
import sys

import pytest

# function -> the pipeline modules its app.py imports (functions/<name>/requirements.txt has no numpy)
LIGHT = {
    "request_planner": ["rlinf_aws.state_plan", "rlinf_aws.lambda_settings"],
    "job_submitter": ["rlinf_aws.state_submit", "rlinf_aws.clients"],
    "failure_notifier": ["rlinf_aws.state_notify_failure", "rlinf_aws.clients"],
    "slack_notifier": ["rlinf_aws.slack_webhook", "rlinf_aws.clients"],
}


@pytest.mark.parametrize("function", sorted(LIGHT))
def test_a_light_function_imports_no_numpy_mlflow_or_torch(function: str) -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in LIGHT[function])
        + "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'mlflow', 'torch', 'scipy'})\n"
        + "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"{function} imports {out}: its Lambda artifact does not carry them"
