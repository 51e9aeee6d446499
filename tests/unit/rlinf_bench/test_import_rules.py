"""The import rules in .importlinter hold for the project, and they do catch a violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from rlinf_bench.cli import main as cli_main

REPO = Path(__file__).resolve().parents[3]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_project_keeps_every_import_rule() -> None:
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 kept, 0 broken" in proc.stdout


def _write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_given_a_core_module_a_lambda_and_the_router_breaking_the_rules_then_each_rule_names_its_import(
    tmp_path: Path,
) -> None:
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    for pkg in ("rlinf_bench", "rlinf_bench/intake", "eval_runner", "infra_probes", "rlinf_local"):
        _write(tmp_path, f"{pkg}/__init__.py")
    _write(tmp_path, "rlinf_bench/cli.py", "def run():\n    from eval_runner import loop\n")  # lazy counts too
    _write(tmp_path, "rlinf_bench/intake/router.py", "import mlflow\n")
    _write(tmp_path, "functions/job_submitter/app.py", "import torch\n")
    _write(tmp_path, "functions/checkpoint_router/app.py", "from rlinf_bench.intake import router\n")
    _write(tmp_path, "rlinf_local/demo.py", "from infra_probes import storage\n")

    proc = _lint_imports(tmp_path)

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 kept, 4 broken" in proc.stdout
    assert "rlinf_bench.cli -> eval_runner" in proc.stdout
    assert "functions.job_submitter.app -> torch" in proc.stdout
    assert "rlinf_bench.intake.router -> mlflow" in proc.stdout
    assert "rlinf_local.demo -> infra_probes" in proc.stdout


def test_the_job_packages_commands_are_found_through_entry_points() -> None:
    sub = next(a for a in cli_main.build_parser()._actions if a.dest == "command")
    assert {"evaluate", "serve-policy", "probe"} <= set(sub.choices or {})
    assert all(module.startswith("rlinf_bench.") for module in cli_main.COMMAND_MODULES)


def test_given_an_entry_point_whose_package_is_missing_then_the_other_commands_still_load(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fake_entry_points(group: str) -> list[EntryPoint]:
        return [
            EntryPoint("zzz-missing", "no_such_package.cli:register", group),
            EntryPoint("schemas-again", "rlinf_bench.cli.schemas:register", group),
        ]

    monkeypatch.setattr(cli_main, "entry_points", fake_entry_points)
    found = cli_main.plugin_commands()

    assert [f.__module__ for f in found] == ["rlinf_bench.cli.schemas"]
    assert "rlinf-bench zzz-missing is unavailable: no_such_package.cli:register cannot be imported" in caplog.text
