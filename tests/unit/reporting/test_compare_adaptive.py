"""`rlinf-bench compare --adaptive`: the runs given are rounds of the group-sequential design."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlinf_bench.contracts import CheckpointReport, EvalMatrix, VerdictValue
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.sequential import apply_adaptive
from rlinf_bench.stats.verdicts import apply_verdicts
from rlinf_cli.main import main
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs


def _save(tmp_path: Path, key: str, step: int, rates: np.ndarray, runs: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [
        str(r.save(tmp_path / f"{key}{r.run_index}.json"))
        for r in heterogeneous_runs(rng, rates, runs=runs, ckpt=checkpoint(step))
    ]


def test_given_one_round_of_a_large_drop_then_below_and_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rates = np.random.default_rng(1).uniform(0.6, 1.0, size=(10, 50))
    prev = _save(tmp_path, "prev", 100, rates, 3, 2)
    cur = _save(tmp_path, "cur", 200, rates * 0.6, 1, 3)
    assert main(["compare", *cur, "--previous", *prev, "--adaptive", "--json"]) == 0
    report = CheckpointReport.from_json(capsys.readouterr().out)
    (v,) = report.verdicts
    assert v.value == VerdictValue.BELOW and "adaptive round 1/6" in v.reason
    assert report.suites[0].adaptive is not None and report.suites[0].adaptive.decision == "stop"


def test_given_no_change_then_within_and_stop_by_the_third_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rates = np.random.default_rng(4).uniform(0.6, 1.0, size=(10, 50))
    prev = _save(tmp_path, "prev", 100, rates, 3, 5)
    cur = _save(tmp_path, "cur", 200, rates, 3, 6)
    assert main(["compare", *cur, "--previous", *prev, "--adaptive"]) == 0
    out = capsys.readouterr().out
    assert "adaptive budget: round 3/6, stop: decided after 3 round(s)" in out and "● within" in out


def _report_with_p(p_below: float, runs: int) -> CheckpointReport:
    rng = np.random.default_rng(0)
    rates = np.full((2, 10), 0.8)
    prev = aggregate_checkpoint(
        [SourcedRun(str(r.run_index), r) for r in heterogeneous_runs(rng, rates, ckpt=checkpoint(1))]
    )
    cur_runs = heterogeneous_runs(rng, rates, runs=runs, ckpt=checkpoint(2))
    report = apply_verdicts(
        aggregate_checkpoint([SourcedRun(str(r.run_index), r) for r in cur_runs], runs_expected=1),
        [],
        previous_report=prev,
    )
    (v,) = report.verdicts
    v.p_value, v.p_value_above = p_below, 1 - p_below
    return report


def test_given_a_borderline_drop_after_three_rounds_then_continue_and_no_verdict_yet() -> None:
    report = apply_adaptive(_report_with_p(0.02, 3))  # z = 2.05: "below" at a fixed 5 %, not at look 3 of 6
    (v,) = report.verdicts
    status = report.suites[0].adaptive
    assert v.value == VerdictValue.INCOMPLETE and "undecided: evaluate another round" in v.reason
    assert status is not None and status.decision == "continue" and "evaluate round 4 (run index 3)" in status.reason


def test_given_the_same_evidence_at_the_sixth_round_then_below() -> None:
    report = apply_adaptive(_report_with_p(0.02, 6))
    assert report.verdicts[0].value == VerdictValue.BELOW and report.suites[0].adaptive.decision == "stop"  # type: ignore[union-attr]


def test_adaptive_is_refused_with_publish(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cur = _save(tmp_path, "cur", 200, np.full((10, 5), 0.9), 1, 3)
    assert main(["compare", *cur, "--adaptive", "--publish", "--tracking-uri", "sqlite:///x.db"]) == 2
    assert "--adaptive is not yet available with --publish" in capsys.readouterr().err


def test_the_request_field_defaults_to_the_fixed_protocol_and_keeps_old_digests() -> None:
    fixed, adaptive = EvalMatrix(), EvalMatrix(adaptive=True)
    assert fixed.adaptive is False and fixed.digest() != adaptive.digest()
    assert "adaptive" not in fixed.model_dump(mode="json", exclude_defaults=True)
