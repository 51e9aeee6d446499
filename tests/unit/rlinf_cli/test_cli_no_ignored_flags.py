"""No flag silently ignored: each one either does what it says or is refused with a message naming it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rlinf_bench.contracts import CheckpointReport
from rlinf_cli.main import main
from tests.unit.rlinf_cli.local_checkpoints import write_local
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs


@pytest.fixture()
def runs(tmp_path: Path) -> list[str]:
    rng = np.random.default_rng(7)
    rates = rng.beta(4, 0.4, size=(10, 20))
    return [
        str(r.save(tmp_path / f"run{r.run_index}.json")) for r in heterogeneous_runs(rng, rates, ckpt=checkpoint(200))
    ]


def test_given_compare_out_without_publish_then_the_report_files_are_written_there(
    runs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"

    assert main(["compare", *runs, "--baseline", "libero/one-traj-sft", "--out", str(out)]) == 0

    assert {p.name for p in out.iterdir()} == {"checkpoint_report.json", "report.md", "sr_vs_step.png"}
    saved = CheckpointReport.load(out / "checkpoint_report.json")
    assert saved.verdicts and "libero/one-traj-sft" in (out / "report.md").read_text()
    assert "libero/one-traj-sft" in capsys.readouterr().out  # the table is still printed


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--tracking-uri", "sqlite:///x.db"], "--tracking-uri only apply with --publish"),
        (["--experiment", "demo"], "--experiment only apply with --publish"),
        (["--tracking-uri", "sqlite:///x.db", "--experiment", "demo"], "--tracking-uri and --experiment only apply"),
    ],
)
def test_given_publish_only_flags_without_publish_then_exit_2_naming_them(
    flags: list[str], named: str, runs: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *runs, *flags]) == 2
    err = capsys.readouterr().err
    assert named in err and "add --publish" in err


def test_given_report_files_and_a_tracking_uri_then_exit_2_rather_than_ignoring_the_uri(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["report", "--reports", str(tmp_path / "r.json"), "--tracking-uri", "sqlite:///x.db"])

    assert rc == 2 and "--tracking-uri and --reports exclude each other" in capsys.readouterr().err


def test_given_status_of_a_local_dir_with_limit_then_exit_2_naming_where_it_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", "--out", str(tmp_path), "--limit", "5"]) == 2
    assert "--limit applies to --state-machine-arn" in capsys.readouterr().err


def test_given_backfill_dry_run_with_a_state_machine_then_nothing_is_started(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_local(tmp_path, 25)
    started: list[str] = []

    class Starter:
        def __init__(self, sfn: object, arn: str) -> None: ...

        def exists(self, name: str) -> bool:
            return False

        def start(self, request: object) -> None:
            started.append("start")

    monkeypatch.setattr("rlinf_aws.execution_starter.ExecutionStarter", Starter)
    monkeypatch.setattr("rlinf_cli.intake_common.Clients.__call__", lambda self, service: object())

    arn = "arn:aws:states:us-east-1:123456789012:stateMachine:rlinf"
    rc = main(["backfill", str(tmp_path), "--dry-run", "--state-machine-arn", arn, "--quiet-period", "0", "--json"])

    assert rc == 0 and not started
    assert [r["status"] for r in json.loads(capsys.readouterr().out)] == ["would_start"]
