"""Fixtures for the deployment tests: the repo, the tool venvs and the template as CloudFormation sees it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rlinf_local.stack import read_template

REPO = Path(__file__).resolve().parents[3]
TOOLS_PY = REPO / ".venv-tools" / "bin" / "python"


def need_tool(path: Path, what: str) -> None:
    """Skip on a developer machine without the tool; in CI (`make test` installs it first) fail instead."""
    if path.exists():
        return
    message = f"{what} is not installed at {path.relative_to(REPO)}: run `make setup-tools`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def template() -> dict[str, Any]:
    """template.yaml as written (short-form tags kept as {"Ref": ...}-like dicts)."""
    return read_template(REPO / "template.yaml")


@pytest.fixture(scope="session")
def transformed() -> dict[str, Any]:
    """template.yaml after samtranslator: the CloudFormation that `sam deploy` submits."""
    need_tool(TOOLS_PY, "aws-sam-translator (.venv-tools)")
    out = subprocess.run(
        [str(TOOLS_PY), str(REPO / "deploy" / "tools" / "sam_transform.py"), str(REPO / "template.yaml")],
        capture_output=True,
        text=True,
        env={**os.environ, "AWS_DEFAULT_REGION": "us-east-1"},
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result
