"""``rlinf-bench backfill ROOT --steps 25,50,75,100 --out DIR`` on one machine (no state machine): the brief's
scheduled loop. Each listed step is evaluated, skipped as already evaluated in DIR (naming the execution), left
as incomplete, or named as not found; ``--dry-run`` says the same and starts nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlinf_cli.main import main
from rlinf_local.backfill import plan_backfill
from rlinf_local.executions import ExecutionSummary
from rlinf_local.pipeline_command import PipelineOutcome, StateFile
from tests.synthetic_checkpoints import fsdp_objects


def write_step(root: Path, step: int, *, complete: bool = True) -> Path:
    ckpt = root / "exp" / "checkpoints" / f"global_step_{step}"
    for relative, size in fsdp_objects(2, metadata_at="first", markers=False):
        if complete or not relative.endswith("full_weights.pt"):
            (ckpt / relative).parent.mkdir(parents=True, exist_ok=True)
            (ckpt / relative).write_bytes(b"\0" * size)
    return ckpt


def evaluated(out: Path, step: int, status: str = "SUCCEEDED") -> str:
    """Record in DIR/state.json that the pipeline evaluated step ``step`` (as it does after each execution)."""
    out.mkdir(parents=True, exist_ok=True)
    name = f"exp-s{step}-0123456789-m0123abcd-a1"
    checkpoint = {"uri": f"s3://rlinf-checkpoints/exp/checkpoints/global_step_{step}", "experiment": "exp"}
    StateFile(out).put(
        ExecutionSummary(name=name, status=status, checkpoint={**checkpoint, "global_step": step}, verdict="SR 40.0%")
    )
    return name


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Steps 25 (evaluated), 50 (complete, new) and 75 (still being written) of one run; 100 not saved yet."""
    runs = tmp_path / "runs"
    for step in (25, 50):
        write_step(runs, step)
    write_step(runs, 75, complete=False)
    return runs


def test_given_the_briefs_steps_then_each_is_evaluated_skipped_pending_or_named_missing(
    root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    name = evaluated(out, 25)

    rows, todo = plan_backfill(root, {25, 50, 75, 100}, out, quiet_period_s=0)

    assert [(r.global_step, r.status) for r in rows] == [
        (25, "already_evaluated"),
        (50, "would_start"),
        (75, "incomplete"),
        (100, "not_found"),
    ]
    assert name in rows[0].detail and "skipped" in rows[0].detail
    assert "global_step_100" in rows[3].detail and str(root) in rows[3].detail
    assert [c.global_step for c in todo] == [50]


def test_given_an_interrupted_execution_then_the_step_is_evaluated_again(root: Path, tmp_path: Path) -> None:
    evaluated(tmp_path / "out", 25, status="INTERRUPTED")

    _, todo = plan_backfill(root, {25}, tmp_path / "out", quiet_period_s=0)

    assert [c.global_step for c in todo] == [25]


def test_given_dry_run_then_the_lines_say_what_would_happen_and_nothing_starts(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rlinf_local.backfill.Embedded", None)  # building a stack would fail the test
    out = tmp_path / "out"
    evaluated(out, 25)

    rc = main(["backfill", str(root), "--steps", "25,50,75,100", "--out", str(out), "--dry-run", "--quiet-period", "0"])

    lines = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert lines[0].split()[:3] == ["step", "25", "already_evaluated"]
    assert lines[1].split()[:3] == ["step", "50", "would_start"] and lines[3].split()[:3] == [
        "step",
        "100",
        "not_found",
    ]
    assert lines[-1].endswith("listed but not found: step(s) [100]")
    assert not {"mlflow.db", "jobs", "outbox", "results"} & {p.name for p in out.iterdir()}  # nothing ran


def test_given_no_out_on_this_machine_then_backfill_asks_for_it(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backfill", str(root), "--steps", "25", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "needs --out DIR" in err and "--state-machine-arn" in err


def test_given_a_backfill_then_the_new_checkpoints_run_through_one_stack_and_the_rows_say_how_it_ended(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[int]] = []

    class Stack:
        def __init__(self, out: Path, **kw: Any) -> None:
            self.stack = type("S", (), {"adaptations": []})()
            self.aws = type("A", (), {"endpoint": "http://127.0.0.1:1"})()

        def __enter__(self) -> Stack:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def run_checkpoints(emb: Stack, checkpoints: list[Any]) -> PipelineOutcome:
        ran.append([c.global_step for c in checkpoints])
        done = ExecutionSummary(name="exp-s50-x-a1", status="SUCCEEDED", verdict="SR 50.0%", mlflow_run_id="r")
        return PipelineOutcome(executions=[done], tracking_uri="sqlite:///x.db")

    monkeypatch.setattr("rlinf_local.backfill.Embedded", Stack)
    monkeypatch.setattr("rlinf_local.backfill.run_checkpoints", run_checkpoints)
    monkeypatch.setattr("rlinf_local.backfill.check_matrix_policy", lambda *a, **kw: None)
    out = tmp_path / "out"
    evaluated(out, 25)

    rc = main(["backfill", str(root), "--steps", "25,50,100", "--out", str(out), "--quiet-period", "0", "--json"])

    rows = json.loads(capsys.readouterr().out)
    assert rc == 0 and ran == [[50]]
    assert [(r["global_step"], r["status"]) for r in rows] == [
        (25, "already_evaluated"),
        (50, "started"),
        (100, "not_found"),
    ]
    assert "exp-s50-x-a1 (SUCCEEDED): SR 50.0%" in rows[1]["detail"]


def test_given_a_deployed_stack_then_a_listed_step_with_no_checkpoint_is_named_too(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Starter:
        def __init__(self, sfn: object, arn: str) -> None: ...

        def exists(self, name: str) -> bool:
            return False

    monkeypatch.setattr("rlinf_aws.execution_starter.ExecutionStarter", Starter)
    monkeypatch.setattr("rlinf_cli.intake_common.Clients.__call__", lambda self, service: object())
    arn = "arn:aws:states:us-east-1:123456789012:stateMachine:rlinf"

    rc = main(
        [
            "backfill",
            str(root),
            "--steps",
            "50,100",
            "--dry-run",
            "--state-machine-arn",
            arn,
            "--quiet-period",
            "0",
            "--json",
        ]
    )

    rows = json.loads(capsys.readouterr().out)
    assert rc == 0 and [(r["global_step"], r["status"]) for r in rows] == [(50, "would_start"), (100, "not_found")]
