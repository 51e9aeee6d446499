"""The import rules in .importlinter hold for the project, and they do catch a violation."""

from __future__ import annotations

import ast
import configparser
import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from rlinf_cli import main as cli_main

REPO = Path(__file__).resolve().parents[3]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


#: Libraries of the adapters: none may be imported by the core, not even lazily inside a function.
ADAPTER_LIBRARIES = (
    "boto3",
    "botocore",
    "kubernetes",
    "moto",
    "aws_lambda_powertools",
    "mlflow",
    "torch",
    "mujoco",
    "robosuite",
    "libero",
    "sapien",
    "pynvml",
)
ADAPTER_PACKAGES = (
    "rlinf_aws",
    "rlinf_k8s",
    "rlinf_tracking",
    "rlinf_doctor",
    "rlinf_local",
    "rlinf_cli",
    "eval_runner",
    "infra_probes",
)


def test_the_project_keeps_every_import_rule() -> None:
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    contracts = (REPO / ".importlinter").read_text().count("[importlinter:contract:")
    assert contracts >= 10 and f"{contracts} kept, 0 broken" in proc.stdout  # 10: with the core's two layer rules


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_core_module_imports_an_adapter_library_or_package_anywhere_in_its_code() -> None:
    # import-linter only sees libraries installed here (sapien lives in .venv-robotwin): scan the source too.
    offenders = {
        str(path.relative_to(REPO)): sorted(bad)
        for path in sorted((REPO / "rlinf_bench").rglob("*.py"))
        if (bad := _imported_roots(path) & {*ADAPTER_LIBRARIES, *ADAPTER_PACKAGES})
    }
    assert offenders == {}


def _write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _stub_named_modules(root: Path) -> None:
    """An empty module for every project module a contract names that the tree lacks (lint-imports insists)."""
    config = configparser.ConfigParser()
    config.read(root / ".importlinter")
    roots = config["importlinter"]["root_packages"].split()
    for section in config.sections():
        for key in ("layers", "modules", "source_modules", "forbidden_modules"):
            for name in config[section].get(key, "").split():
                parts = name.strip("()").split(".")
                if parts[0] in roots and len(parts) > 1 and not (root / "/".join(parts)).with_suffix(".py").exists():
                    _write(root, "/".join(parts) + "/__init__.py")


def test_given_a_core_module_a_lambda_and_the_router_breaking_the_rules_then_each_rule_names_its_import(
    tmp_path: Path,
) -> None:
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    for pkg in (
        "rlinf_bench",
        "rlinf_bench/intake",
        "rlinf_aws",
        "rlinf_k8s",
        "rlinf_tracking",
        "rlinf_doctor",
        "rlinf_cli",
        "rlinf_clikit",
        "eval_runner",
        "infra_probes",
        "rlinf_local",
        "bench",
    ):
        _write(tmp_path, f"{pkg}/__init__.py")
    _write(tmp_path, "rlinf_bench/document_store.py", "def s3():\n    import boto3\n")  # lazy counts too
    _write(tmp_path, "rlinf_bench/intake/router.py", "import mlflow\n")
    _write(tmp_path, "functions/job_submitter/app.py", "import torch\n")
    _write(tmp_path, "functions/checkpoint_router/app.py", "from rlinf_bench.intake import router\n")
    _write(tmp_path, "rlinf_local/demo_command.py", "from infra_probes import storage\n")
    _write(tmp_path, "rlinf_k8s/jobs.py", "from rlinf_aws import state_plan\n")
    _write(tmp_path, "rlinf_aws/state_plan.py", "")
    _write(tmp_path, "rlinf_aws/router_lambda.py", "")
    _write(tmp_path, "rlinf_local/local_executor.py", "")
    _write(tmp_path, "rlinf_k8s/submitter_factory.py", "def local():\n    from rlinf_local import local_executor\n")
    _write(tmp_path, "rlinf_local/commands.py", "from rlinf_cli import arguments\n")
    _write(tmp_path, "eval_runner/cli.py", "from rlinf_cli import output\n")
    _write(tmp_path, "rlinf_clikit/arguments.py", "from rlinf_bench import errors\n")
    _write(tmp_path, "rlinf_cli/arguments.py", "")
    _write(tmp_path, "rlinf_cli/output.py", "")
    _write(tmp_path, "rlinf_bench/errors.py", "")
    _stub_named_modules(tmp_path)

    proc = _lint_imports(tmp_path)

    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rlinf_bench.document_store -> boto3" in proc.stdout
    assert "functions.job_submitter.app -> torch" in proc.stdout
    assert "rlinf_bench.intake.router -> mlflow" in proc.stdout
    assert "rlinf_local.demo_command -> infra_probes" in proc.stdout
    assert "rlinf_k8s.jobs -> rlinf_aws.state_plan" in proc.stdout
    # the package cycles that once were: the backend chooser, and the command-line helpers the Jobs borrowed
    assert "rlinf_k8s.submitter_factory -> rlinf_local.local_executor" in proc.stdout
    assert "rlinf_local.commands -> rlinf_cli.arguments" in proc.stdout
    assert "eval_runner.cli -> rlinf_cli.output" in proc.stdout
    assert "rlinf_clikit.arguments -> rlinf_bench.errors" in proc.stdout


def test_the_job_packages_commands_are_found_through_entry_points() -> None:
    sub = next(a for a in cli_main.build_parser()._actions if a.dest == "command")
    assert {"evaluate", "serve-policy", "probe"} <= set(sub.choices or {})
    assert all(module.startswith("rlinf_cli.") for module in cli_main.COMMAND_MODULES)


def test_given_an_entry_point_whose_package_is_missing_then_the_other_commands_still_load(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def fake_entry_points(group: str) -> list[EntryPoint]:
        return [
            EntryPoint("zzz-missing", "no_such_package.cli:register", group),
            EntryPoint("schemas-again", "rlinf_cli.schemas_command:register", group),
        ]

    monkeypatch.setattr(cli_main, "entry_points", fake_entry_points)
    found = cli_main.plugin_commands()

    assert [f.__module__ for f in found] == ["rlinf_cli.schemas_command"]
    assert "rlinf-bench zzz-missing is unavailable: no_such_package.cli:register cannot be imported" in caplog.text
