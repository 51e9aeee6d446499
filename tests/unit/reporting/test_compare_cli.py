"""`rlinf-bench compare`: tables, JSON, and errors that name the bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rlinf_bench.contracts import CheckpointReport, RunStatus
from rlinf_cli.main import main
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs, make_run


@pytest.fixture()
def results(tmp_path: Path) -> dict[str, list[str]]:
    rng = np.random.default_rng(7)
    rates = rng.beta(4, 0.4, size=(10, 20))  # every libero_spatial task: verdicts need the whole suite
    out: dict[str, list[str]] = {"current": [], "previous": []}
    for key, step in (("current", 200), ("previous", 100)):
        for r in heterogeneous_runs(rng, rates, ckpt=checkpoint(step)):
            out[key].append(str(r.save(tmp_path / f"{key}{r.run_index}.json")))
    return out


def test_given_three_runs_and_a_baseline_when_compared_then_the_verdict_table_is_printed(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["compare", *results["current"], "--baseline", "libero/one-traj-sft", "--previous", *results["previous"]])
    out = capsys.readouterr().out
    assert rc == 0
    assert "| libero_spatial | libero/one-traj-sft | ▲ above |" in out
    assert "previous (global_step 100)" in out and "paired t-test" in out


def test_given_json_flag_then_the_output_is_a_valid_checkpoint_report(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *results["current"], "--baseline", "libero/openvla-oft-rlinf", "--json"]) == 0
    report = CheckpointReport.from_json(capsys.readouterr().out)
    assert report.global_step == 200 and report.suites[0].runs_completed == 3
    assert report.verdicts[0].against == "libero/openvla-oft-rlinf"


def test_given_a_missing_run_and_strict_then_exit_1_with_incomplete(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["compare", *results["current"][:2], "--baseline", "libero/openvla-oft-sft", "--strict"])
    assert rc == 1
    assert "incomplete" in capsys.readouterr().out


def test_given_an_unknown_baseline_then_exit_2_with_a_suggestion(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *results["current"], "--baseline", "libero/openvla-oft-rlif"]) == 2
    assert "Did you mean 'libero/openvla-oft-rlinf'" in capsys.readouterr().err


def test_given_a_file_with_a_wrong_schema_version_then_the_error_names_file_and_field(
    tmp_path: Path, results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(Path(results["current"][0]).read_text())
    doc["schema_version"] = "9.0"
    del doc["suite"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["compare", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "schema_version" in err and "field suite" in err


def test_given_runs_of_two_checkpoints_mixed_then_the_error_names_the_files(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", results["current"][0], results["previous"][1]]) == 2
    err = capsys.readouterr().err
    assert results["current"][0] in err and results["previous"][1] in err and "checkpoint" in err


def test_given_previous_of_another_suite_then_the_error_says_nothing_to_compare(
    tmp_path: Path, results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    goal = make_run({0: [1, 0]}, suite="libero_goal", ckpt=checkpoint(100))
    path = str(goal.save(tmp_path / "goal.json"))
    assert main(["compare", *results["current"], "--previous", path]) == 2
    assert "nothing to compare" in capsys.readouterr().err


def test_given_a_failed_run_then_its_error_is_shown_and_verdicts_are_withheld(
    tmp_path: Path, results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    failed = make_run({}, run_index=2, status=RunStatus.FAILED, error="OOMKilled", ckpt=checkpoint(200), trials=20)
    path = str(failed.save(tmp_path / "failed.json"))
    assert main(["compare", *results["current"][:2], path, "--baseline", "libero/openvla-oft-sft"]) == 0
    out = capsys.readouterr().out
    assert "◌ incomplete" in out and "run 2 failed" in out


def test_given_probe_results_then_compare_lists_infra_checks(
    tmp_path: Path, results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_bench.baselines import infra_target
    from rlinf_bench.contracts import Measurement, ProbeResult, ProbeVerdict

    probe = ProbeResult(
        probe="gpu",
        values={"util_update_pct": Measurement(value=81.0, unit="%")},
        target=infra_target("gpu", "util_update_pct"),
        verdict=ProbeVerdict.PASS,
    )
    path = str(probe.save(tmp_path / "gpu.json"))
    assert main(["compare", *results["current"], "--probe", path, "--json"]) == 0
    report = CheckpointReport.from_json(capsys.readouterr().out)
    assert [(c.probe, c.metric, c.value, c.target, c.verdict) for c in report.infra] == [
        ("gpu", "util_update_pct", 81.0, 70.0, "pass")
    ]


def test_given_no_tracking_uri_then_report_says_how_to_give_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert main(["report", "--out", "x"]) == 2
    assert "--tracking-uri" in capsys.readouterr().err


def test_given_report_files_then_report_builds_the_page_without_mlflow(
    tmp_path: Path, results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for key in ("previous", "current"):
        assert main(["compare", *results[key], "--baseline", "libero/one-traj-sft", "--json"]) == 0
        path = tmp_path / f"{key}.json"
        path.write_text(capsys.readouterr().out)
        paths.append(str(path))
    assert main(["report", "--reports", *paths, "--out", str(tmp_path / "site")]) == 0
    md = (tmp_path / "site" / "report.md").read_text()
    assert "| 100 |" in md and "| 200 |" in md
    assert "| Results are logged to MLflow for comparison | not run |" in md
    assert (tmp_path / "site" / "report.html").stat().st_size > 20_000  # the plot is embedded


def test_given_a_tolerance_in_points_then_the_error_says_it_is_a_fraction(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *results["current"], "--tolerance", "2"]) == 2
    assert "0.02 means 2 points" in capsys.readouterr().err


def test_given_a_missing_file_then_the_error_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "nope.json")]) == 2
    assert "nope.json does not exist" in capsys.readouterr().err


def test_given_one_of_three_runs_and_strict_then_exit_1_naming_the_missing_runs(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["compare", results["current"][0], "--baseline", "libero/openvla-oft-rlinf", "--strict"])
    assert rc == 1
    assert "libero_spatial: 1 of 3 run(s) complete" in capsys.readouterr().err


def test_given_a_not_comparable_verdict_or_no_verdict_and_strict_then_exit_1(
    results: dict[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_bench.contracts import VerdictValue
    from rlinf_cli.compare_command import strict_failures

    assert main(["compare", *results["current"], "--json"]) == 0
    report = CheckpointReport.from_json(capsys.readouterr().out)
    assert strict_failures(report) == ["no verdict: pass --baseline or --previous"]
    assert main(["compare", *results["current"], "--strict"]) == 1
    assert "no verdict" in capsys.readouterr().err

    assert main(["compare", *results["current"], "--baseline", "libero/one-traj-sft", "--json"]) == 0
    report = CheckpointReport.from_json(capsys.readouterr().out)
    assert strict_failures(report) == []  # decisive on complete data: --strict exits 0
    verdict = report.verdicts[0]
    report.suites[0].verdicts[0] = verdict.model_copy(
        update={"value": VerdictValue.NOT_COMPARABLE, "reason": "max_steps differ"}
    )
    assert strict_failures(report) == ["libero_spatial vs libero/one-traj-sft: not_comparable (max_steps differ)"]
