"""Batch commands account for every input: replay-events and backfill counts add up to what they read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_cli.main import main
from tests.integration.intake.conftest import REGION
from tests.synthetic_checkpoints import fsdp_objects

REPO = Path(__file__).resolve().parents[3]


def test_given_the_recorded_export_then_the_summary_accounts_for_every_event(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    events = REPO / "events" / "recorded-export.jsonl"
    n = sum(1 for line in events.read_text().splitlines() if line.strip())

    assert main(["replay-events", str(events), "--json"]) == 1  # its one dead line makes the status 1
    summary = json.loads(capsys.readouterr().out)["summary"]

    counts = {k: summary[k] for k in ("started", "duplicate", "pending", "dead", "ignored")}
    assert summary["events"] == summary["records"] == n
    assert sum(counts.values()) == n
    assert counts["started"] == 2 and counts["pending"] == 1 and counts["dead"] == 1
    assert sum(summary["ignored_reasons"].values()) == counts["ignored"] > 0
    assert "directory marker" in summary["ignored_reasons"]


def test_given_a_classic_notification_with_several_records_then_records_are_counted_and_add_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    root = "runs/exp/checkpoints/global_step_5"
    records = [
        {
            "eventName": "ObjectCreated:Put",
            "s3": {"bucket": {"name": "b-1"}, "object": {"key": f"{root}/{rel}", "size": size}},
        }
        for rel, size in fsdp_objects(2, metadata_at="last")
    ]
    outside = {
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": "b-1"}, "object": {"key": "logs/x.txt", "size": 3}},
    }
    lines = [json.dumps({"Records": records}), json.dumps({"Records": [outside]}), "not json"]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")

    assert main(["replay-events", str(path), "--quiet-period", "60"]) == 1  # "not json" is dead
    first = capsys.readouterr().out.splitlines()[0]

    total = len(records) + 2
    assert first.startswith(f"3 events ({total} object records): 1 started, 0 duplicate, 0 pending, 1 dead, ")
    assert f"{total - 2} ignored (= {total})" in first


def _write_local(root: Path, step: int, *, complete: bool = True) -> None:
    ckpt = root / "exp" / "checkpoints" / f"global_step_{step}"
    for relative, size in fsdp_objects(2, metadata_at="first", markers=False):
        if complete or not relative.endswith("full_weights.pt"):
            (ckpt / relative).parent.mkdir(parents=True, exist_ok=True)
            (ckpt / relative).write_bytes(b"\0" * size)


def test_given_backfill_with_steps_then_the_summary_counts_every_checkpoint_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_local(tmp_path, 25)
    _write_local(tmp_path, 50, complete=False)
    _write_local(tmp_path, 75)

    out = ["--out", str(tmp_path / "out")]  # a local root and no state machine: the embedded default's record
    assert main(["backfill", str(tmp_path), "--steps", "25,50", "--dry-run", "--quiet-period", "0", *out]) == 0
    last = capsys.readouterr().out.splitlines()[-1]

    assert last == (
        f"3 checkpoints under {tmp_path}: 0 started, 0 duplicate (already evaluated), 1 pending (incomplete), "
        "1 would start (--dry-run), 1 ignored (not in --steps: [75]) (= 3)"
    )
