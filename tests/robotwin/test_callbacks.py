"""A RoboTwin eval Job answers the state machine like a LIBERO one: a real ``python -m eval_runner``
process reports its failure through Step Functions (moto server on loopback)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("moto", reason="the workflow callbacks are tested in the main venv (make test)")

from tests.integration.workflow.test_job_callbacks import finished, job_env, moto_server, start_waiting


def _asl_parser_loads() -> str:
    try:
        from moto.stepfunctions.parser.asl.antlr.runtime.ASLLexer import ASLLexer  # noqa: F401
    except TypeError as exc:  # an antlr4 runtime older than moto's generated parser (hydra-core pins 4.9)
        from importlib.metadata import version

        return f"moto's Step Functions parser does not load with antlr4-python3-runtime {version('antlr4-python3-runtime')}: {exc}"
    return ""


pytestmark = pytest.mark.skipif(bool(_asl_parser_loads()), reason=_asl_parser_loads() or "-")

__all__ = ["moto_server"]  # the fixture, re-used from the workflow tests


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)


def test_a_robotwin_job_with_a_misspelt_task_reports_the_fix_with_send_task_failure(moto_server: str) -> None:
    execution, token, sfn = start_waiting(moto_server)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eval_runner",
            "--suite",
            "robotwin/lift_pott",
            "--policy",
            "builtin:hold",
            "--trials",
            "1",
        ],
        env=job_env(moto_server, token),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert proc.returncode == 2, proc.stderr[-2000:]
    error = json.loads(finished(sfn, execution)["output"])["error"]
    assert "Did you mean 'lift_pot'" in error["Cause"], error
    assert token not in proc.stdout + proc.stderr
