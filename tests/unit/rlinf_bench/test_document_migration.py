"""Stored documents of earlier shapes are rewritten once into today's (``rlinf-bench migrate-results ROOT``), and
today's readers refuse the old shapes instead of guessing: one test per shape, each old document made from a
current one by taking away what earlier versions did not write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.contracts import CheckpointReport, EvalRun, RunResult, RunStatus
from rlinf_bench.document_migration import migrate_document, migrate_tree
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import ContractError
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_cli.main import main
from tests.unit.stats.runfactory import CKPT, make_run

OUTCOMES = {0: [1, 0, 1], 1: [0, 0, 1]}


def _dump(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(model.to_json())
    return data


def _runs(root: Path, n: int = 2) -> list[SourcedRun]:
    """``n`` complete runs of libero_spatial written under ``root``, as the aggregate read them."""
    out = []
    for i in range(n):
        run = make_run(OUTCOMES, run_index=i, protocol="oft")
        path = run.save(root / "libero_spatial" / f"run{i}.json")
        out.append(SourcedRun(str(path), run))
    return out


def _report(root: Path) -> dict[str, Any]:
    return _dump(aggregate_checkpoint(_runs(root), runs_expected=2))


def test_an_evalrun_with_the_trial_counts_earlier_name_is_migrated_and_no_longer_read() -> None:
    run = EvalRun(request_id="r", checkpoint=CKPT, suite="libero_goal", run_index=0, seed=0, trials_per_task=7)
    old = _dump(run)
    old["trials"] = old.pop("trials_per_task")

    with pytest.raises(ContractError, match="trials"):
        EvalRun.from_dict(old)
    migrated = migrate_document(old)

    assert migrated.changes == ["trials -> trials_per_task"]
    assert EvalRun.from_dict(migrated.data) == run


def test_a_run_result_without_a_protocol_gets_oft_with_its_own_steps_and_a_failed_one_is_left_as_it_is() -> None:
    run = make_run(OUTCOMES, protocol="oft")
    old = _dump(run)
    old.pop("protocol")

    protocol = RunResult.from_dict(migrate_document(old).data).protocol

    assert protocol is not None
    assert (protocol.name, protocol.max_steps, protocol.settle_steps) == ("oft", run.max_steps, run.settle_steps)
    failed = _dump(make_run({}, status=RunStatus.FAILED, error="pod evicted").model_copy(update={"protocol": None}))
    assert migrate_document(failed).changes == []


def test_a_protocol_without_its_profile_name_is_named_oft_and_no_longer_read() -> None:
    old = _dump(make_run(OUTCOMES, protocol="oft"))
    del old["protocol"]["name"]

    with pytest.raises(ContractError, match=r"protocol\.name"):
        RunResult.from_dict(old)
    migrated = migrate_document(old)

    assert RunResult.from_dict(migrated.data).protocol.name == "oft"  # type: ignore[union-attr]


def test_a_suite_report_without_a_protocol_gets_oft_defaults_for_its_suite(tmp_path: Path) -> None:
    old = _report(tmp_path)
    old["suites"][0].pop("protocol")

    with pytest.raises(ContractError, match="protocol"):
        CheckpointReport.from_dict(old)
    protocol = CheckpointReport.from_dict(migrate_document(old).data).suites[0].protocol

    assert (protocol.name, protocol.max_steps, protocol.settle_steps) == ("oft", 220, 10)


def test_a_suite_report_of_a_suite_the_catalogue_does_not_know_and_no_protocol_is_refused_naming_the_fix(
    tmp_path: Path,
) -> None:
    old = _report(tmp_path)
    old["suites"][0].pop("protocol")
    old["suites"][0]["suite"] = "libero_custom"

    with pytest.raises(ContractError, match=r"libero_custom.*aggregate its runs again"):
        migrate_document(old)


def test_a_suite_report_without_its_trial_count_takes_it_from_its_states(tmp_path: Path) -> None:
    old = _report(tmp_path)
    old["suites"][0]["trials_per_task"] = None

    migrated = migrate_document(old)

    assert migrated.changes == ["suites[0].trials_per_task = 3"]
    assert CheckpointReport.from_dict(migrated.data).suites[0].trials_per_task == 3


def test_a_report_with_per_state_counts_only_gets_its_per_run_rows_back_from_its_runs(tmp_path: Path) -> None:
    current = _report(tmp_path)
    old = json.loads(json.dumps(current))
    for state in old["suites"][0]["states"]:
        state.pop("episodes")
    (tmp_path / "report.json").write_text(json.dumps(old))

    (looked,) = [f for f in migrate_tree(str(tmp_path), Storage()) if f.kind == "CheckpointReport"]

    assert looked.migrated and looked.kind == "CheckpointReport"
    after = CheckpointReport.load(tmp_path / "report.json")
    assert after.suites[0].states == CheckpointReport.from_dict(current).suites[0].states
    assert {e.run_index for s in after.suites[0].states for e in s.episodes} == {0, 1}


def test_a_report_whose_runs_are_gone_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    old = _report(tmp_path)
    for state in old["suites"][0]["states"]:
        state.pop("episodes")
    for run in (tmp_path / "libero_spatial").iterdir():
        run.unlink()
    report = tmp_path / "report.json"
    report.write_text(json.dumps(old))

    (looked,) = [f for f in migrate_tree(str(tmp_path), Storage()) if f.kind == "CheckpointReport"]

    assert not looked.migrated and "run0.json" in looked.error and "not there" in looked.error
    assert json.loads(report.read_text()) == old


def test_migrating_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    old = _report(tmp_path)
    old["suites"][0].pop("protocol")
    old["suites"][0]["trials_per_task"] = None
    (tmp_path / "report.json").write_text(json.dumps(old))
    run0 = tmp_path / "libero_spatial" / "run0.json"
    aged = json.loads(run0.read_text())
    aged.pop("protocol")
    run0.write_text(json.dumps(aged))

    first = [f for f in migrate_tree(str(tmp_path), Storage()) if f.changes]
    files = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    second = [f for f in migrate_tree(str(tmp_path), Storage()) if f.changes]

    assert {Path(f.uri).name for f in first} == {"report.json", "run0.json"}
    assert second == []
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json")} == files


def test_the_command_migrates_a_folder_says_what_it_changed_and_a_dry_run_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs(tmp_path, 1)
    run0 = tmp_path / "libero_spatial" / "run0.json"
    aged = json.loads(run0.read_text())
    del aged["protocol"]["name"]
    run0.write_text(json.dumps(aged))
    before = run0.read_bytes()

    assert main(["migrate-results", str(tmp_path), "--dry-run"]) == 0
    assert run0.read_bytes() == before
    assert "would migrate RunResult" in capsys.readouterr().out

    assert main(["migrate-results", str(tmp_path), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["uri"] == str(run0) and entry["changes"] and not entry["error"]
    assert RunResult.load(run0).protocol.name == "oft"  # type: ignore[union-attr]


def test_the_command_exits_1_naming_a_document_it_cannot_migrate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _report(tmp_path)
    old["suites"][0].pop("protocol")
    old["suites"][0]["suite"] = "libero_custom"
    (tmp_path / "report.json").write_text(json.dumps(old))

    assert main(["migrate-results", str(tmp_path)]) == 1
    assert "not migrated:" in capsys.readouterr().err
