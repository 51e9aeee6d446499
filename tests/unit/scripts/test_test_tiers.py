"""scripts/test_tiers.py: which pytest runs each tier gets, and what the whole run reports and returns."""

from __future__ import annotations

import argparse
import importlib.util
import json
import stat
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("test_tiers_script", REPO / "scripts" / "test_tiers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tiers = _load()


def _opts(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = {
        "python": sys.executable,
        "rlinf_python": None,
        "robotwin_python": None,
        "tiers": None,
        "durations": {},
    }
    return argparse.Namespace(**{**base, **kw})


def _fake_pytest(tmp_path: Path, *, exit_code: int, summary: str) -> Path:
    """A stand-in "python" that prints a pytest summary line and exits with ``exit_code``."""
    exe = tmp_path / f"python-{exit_code}"
    exe.write_text(f"#!/bin/sh\necho '===== {summary} ====='\nexit {exit_code}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def _files(tier: object) -> set[str]:
    return {a for a in tier.argv if a.startswith("tests/")}  # type: ignore[attr-defined]


def test_given_no_arguments_then_every_main_tier_runs_and_the_long_ones_in_two_balanced_parts() -> None:
    durations = {
        "tests/sim/test_reference_fidelity.py": 150.0,
        "tests/sim/test_expert_policy.py": 75.0,
        "tests/sim/test_physics_split.py": 70.0,
        "tests/e2e/test_demo.py": 220.0,
    }
    main, other, errors = tiers.build_tiers(_opts(durations=durations), [])
    assert [t.name for t in main] == ["sim 1/2", "sim 2/2", "e2e 1/2", "e2e 2/2", "integration", "unit"]
    assert all(t.expect_tests for t in main)
    assert "tests/unit" in main[-1].argv and "tests/robotwin" in main[-1].argv
    assert other == [] and errors == []
    sim = sorted((REPO / "tests" / "sim").glob("test_*.py"))
    one, two = _files(main[0]), _files(main[1])
    assert not one & two and one | two == {str(p.relative_to(REPO)) for p in sim}  # every file once
    assert "tests/sim/test_reference_fidelity.py" in one  # the longest file starts the first part ...
    assert {"tests/sim/test_expert_policy.py", "tests/sim/test_physics_split.py"} <= two  # ... the next two the other
    assert abs(main[0].weight - main[1].weight) <= 150.0 / 2 + tiers.UNKNOWN_FILE_S * len(sim)


def test_given_recorded_times_then_the_parts_start_longest_first_and_save_durations_records_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    passing = _fake_pytest(tmp_path, exit_code=0, summary="5 passed in 0.10s")
    record = tmp_path / "durations.json"
    record.write_text(
        '{"tests/unit/scripts/test_test_tiers.py": 1.0, "tests/integration/deploy/test_sam_build.py": 9.0}'
    )
    monkeypatch.setattr(tiers, "DURATIONS", record)
    logs = tmp_path / "logs"
    logs.mkdir()
    # what pytest's --junitxml would have written for the integration part
    (logs / "integration.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.integration.deploy.test_sam_build" name="t" time="30.5"/>'
        '<testcase classname="tests.integration.deploy.test_sam_build" name="u" time="1.5"/></testsuite></testsuites>'
    )
    monkeypatch.setattr(tiers, "REPO", REPO)
    rc = tiers.main(
        ["--python", str(passing), "--tiers", "unit,integration", "--log-dir", str(logs), "--save-durations"]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert out.index("tier integration started") < out.index("tier unit started")  # 9 s recorded before 1 s
    saved = json.loads(record.read_text())
    assert saved["tests/integration/deploy/test_sam_build.py"] == 32.0  # setup and calls of the file summed
    assert saved["tests/unit/scripts/test_test_tiers.py"] == 1.0  # a file this run did not time keeps its record


def test_given_a_test_file_then_only_its_tier_runs_and_an_empty_tier_is_not_a_failure() -> None:
    main, _, _ = tiers.build_tiers(_opts(), ["tests/unit/scripts/test_test_tiers.py", "-x"])
    assert [t.name for t in main] == ["unit"]
    assert main[0].argv[-1] == "-x"  # every other argument goes to pytest
    assert "tests/unit/scripts/test_test_tiers.py" in main[0].argv
    assert not main[0].expect_tests  # a selection: exit 5 (nothing collected) is fine


def test_given_a_missing_venv_under_ci_then_it_is_an_error_naming_the_make_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CI", "true")
    _, other, errors = tiers.build_tiers(_opts(rlinf_python="/nonexistent/python"), [])
    assert [t.name for t in other] == ["rlinf"]
    assert other[0].status.startswith("ERROR")
    assert errors and "make setup-rlinf" in errors[0]


def test_given_a_missing_venv_outside_ci_then_its_tier_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    _, other, errors = tiers.build_tiers(_opts(robotwin_python="/nonexistent/python"), [])
    assert other[0].status == "skipped" and errors == []


@pytest.mark.parametrize(
    ("line", "summary"),
    [
        ("===== 3 passed, 1 skipped in 1.20s =====", "3 passed, 1 skipped in 1.20s"),
        ("1 failed, 1056 passed, 10 skipped, 3 errors in 975.06s (0:16:15)", None),
        ("no tests ran in 0.01s", "no tests ran in 0.01s"),
    ],
)
def test_given_pytest_output_then_its_last_summary_line_is_kept(line: str, summary: str | None) -> None:
    assert tiers.last_summary(f"collected 4 items\n{line}\n") == (summary or line)


def test_given_one_failing_tier_then_the_run_exits_1_and_the_table_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = _fake_pytest(tmp_path, exit_code=1, summary="1 failed, 2 passed in 0.10s")
    rc = tiers.main(["--python", str(failing), "--tiers", "unit,e2e", "--log-dir", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    assert rc == 1
    assert "failed tiers: e2e 1/2, e2e 2/2, unit" in out  # both parts of e2e
    assert "1 failed, 2 passed in 0.10s" in out and "total wall time" in out


def test_given_passing_tiers_then_the_run_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    passing = _fake_pytest(tmp_path, exit_code=0, summary="5 passed in 0.10s")
    assert tiers.main(["--python", str(passing), "--tiers", "unit,sim", "--serial"]) == 0
    assert "passed" in capsys.readouterr().out


def test_given_a_tier_that_collects_nothing_without_a_selection_then_the_run_fails(tmp_path: Path) -> None:
    empty = _fake_pytest(tmp_path, exit_code=5, summary="no tests ran in 0.01s")
    assert tiers.main(["--python", str(empty), "--tiers", "unit", "--serial"]) == 1


@pytest.mark.parametrize("exit_code", [0, 2, 5])
def test_given_checks_then_they_start_before_every_part_and_their_exit_code_decides_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], exit_code: int
) -> None:
    passing = _fake_pytest(tmp_path, exit_code=0, summary="5 passed in 0.10s")
    checks = f"echo ruff mypy ran; exit {exit_code}"
    rc = tiers.main(["--python", str(passing), "--tiers", "unit,e2e", "--checks", checks, "--jobs", "2"])
    out = capsys.readouterr().out
    started = [line.split(" started")[0] for line in out.splitlines() if line.endswith(")") and " started: " in line]
    assert started[0] == "##### tier checks" and len(started) == 4  # checks, e2e 1/2, e2e 2/2, unit
    assert "ruff mypy ran" in out
    assert rc == (0 if exit_code == 0 else 1)
    if exit_code:  # 5 is a failed check, not pytest's "no tests collected"
        assert f"FAILED (exit {exit_code})" in out and "failed tiers: checks" in out
