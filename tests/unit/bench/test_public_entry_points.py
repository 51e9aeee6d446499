"""bench/ reaches the Job packages through their ``api`` modules only, and those modules export what they list.

import-linter's ``bench-uses-public-entry-points`` contract forbids bench every module of eval_runner and
infra_probes but ``api`` by name (it cannot say "all but one"). A module added to either package would be
missing from that list, and so allowed, without the first test here.
"""

from __future__ import annotations

import configparser
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CONTRACT = "importlinter:contract:bench-uses-public-entry-points"
JOB_PACKAGES = ("eval_runner", "infra_probes")


def forbidden_modules() -> set[str]:
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    return set(config[CONTRACT]["forbidden_modules"].split())


def modules_of(package: str) -> set[str]:
    """The package's own modules and subpackages (a subpackage stands for everything under it)."""
    found = set()
    for path in (REPO / package).iterdir():
        if path.suffix == ".py" and path.stem != "__init__":
            found.add(f"{package}.{path.stem}")
        elif (path / "__init__.py").is_file():
            found.add(f"{package}.{path.name}")
    return found


@pytest.mark.parametrize("package", JOB_PACKAGES)
def test_the_contract_forbids_every_module_of_a_job_package_but_its_api(package: str) -> None:
    internal = modules_of(package) - {f"{package}.api"}
    listed = {m for m in forbidden_modules() if m.startswith(f"{package}.")}
    assert internal - listed == set(), (
        f"add these to [{CONTRACT}] forbidden_modules in .importlinter (or, if bench needs them, export what it "
        f"needs from {package}.api)"
    )
    assert listed - internal == set(), f"[{CONTRACT}] names modules {package} no longer has"
    assert f"{package}.api" not in listed


@pytest.mark.parametrize("package", JOB_PACKAGES)
def test_an_api_module_exports_every_name_it_lists_and_nothing_private(package: str) -> None:
    api = importlib.import_module(f"{package}.api")
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert missing == []
    assert [name for name in api.__all__ if name.startswith("_")] == []


def test_parse_evaluate_args_gives_what_the_evaluate_command_would_run(tmp_path: Path) -> None:
    from eval_runner.api import parse_evaluate_args

    out = tmp_path / "run.json"
    argv = ["--suite", "libero_goal", "--tasks", "1,3", "--trials", "2", "--workers", "3", "--out", str(out)]
    run, settings = parse_evaluate_args([*argv, "--batch-window-ms", "5", "--no-progress"])
    assert (run.suite, run.task_ids, run.trials_per_task, run.workers, run.output_uri) == (
        "libero_goal",
        [1, 3],
        2,
        3,
        str(out),
    )
    assert settings.batch_window_ms == 5.0 and settings.progress is False
