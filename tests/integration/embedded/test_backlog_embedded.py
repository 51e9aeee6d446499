"""The backlog policy in the embedded default: template.yaml in moto, the real router, a burst of checkpoints.

The evaluations fail at planning (an unknown suite): the fastest end an execution can have, and an end of
any status frees the slot, which is what is under test here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_bench.reporting.backlog_section import with_backlog_section
from rlinf_local.backlog_status import format_backlog, read_backlog
from rlinf_local.embedded import Embedded
from rlinf_local.stack import TOOLS_PYTHON
from tests.integration.intake.uploads import put_objects
from tests.synthetic_checkpoints import fsdp_objects

pytestmark = pytest.mark.slow
CONFIG = "suites: [{name: libero_nowhere}]\nbacklog: {max_running: 1, when_free: latest}\n"


def _steps(emb: Embedded) -> list[int]:
    sfn = emb.aws.client("stepfunctions")
    inputs = [json.loads(sfn.describe_execution(executionArn=a)["input"]) for a in emb.executions().values()]
    return sorted(i["checkpoint"]["global_step"] for i in inputs)


def test_given_a_burst_of_10_in_the_embedded_default_then_the_first_and_the_last_run(tmp_path: Path) -> None:
    if not TOOLS_PYTHON.exists():
        pytest.skip("aws-sam-translator is not installed in .venv-tools: run `make setup-sam`")
    with Embedded(tmp_path / "out", config_text=CONFIG, echo=lambda _: None, progress=False) as emb:
        s3 = emb.aws.client("s3")
        for step in range(25, 275, 25):
            root = f"exp/checkpoints/global_step_{step}"
            put_objects(s3, emb.stack.bucket, root, fsdp_objects(2, metadata_at="first"), multipart_weights=False)
        first = emb.route_until_started(set())
        emb.route()
        assert _steps(emb) == [25]
        (arn,) = first.values()
        assert emb.wait(arn, poll_s=0.2) == "FAILED"

        released = emb.execution_ended(arn)

        assert released == [f"s3://{emb.stack.bucket}/exp/checkpoints/global_step_250"]
        assert emb.execution_ended(arn) == []  # the same end twice releases nothing more
        assert _steps(emb) == [25, 250]
        emb.save_backlog()
    listing = format_backlog(read_backlog(tmp_path / "out"))  # what `status --out DIR` prints under the table
    assert sum("  superseded  " in line for line in listing.splitlines()) == 8
    assert "exp step      50  superseded  superseded by step 250 (backlog when_free=latest)" in listing
    section = with_backlog_section("<html><body></body></html>", read_backlog(tmp_path / "out"))
    assert "Held / superseded checkpoints" in section and section.count("<tr>") == 9
