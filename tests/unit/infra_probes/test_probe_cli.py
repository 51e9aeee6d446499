"""The probe command line: both entry points, exit codes, bad input as a result, environment labels."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infra_probes.environment import INSTANCE_TYPE_ENV, filesystem_of, resolve_instance_type
from infra_probes.probe_cli import EXIT_CODES, build_parser, execute
from rlinf_bench.contracts import ProbeResult, ProbeVerdict
from rlinf_cli.main import build_parser as rlinf_parser

REPO = Path(__file__).resolve().parents[3]


def test_given_rlinf_bench_when_probe_is_asked_then_all_five_probes_are_subcommands() -> None:
    args = rlinf_parser().parse_args(["probe", "storage", "--path", "/tmp"])
    assert args.probe == "storage" and args.path == "/tmp"
    for name in ("gpu", "nccl", "checkpoint_io", "throughput"):
        assert build_parser().parse_args([name, *(["--run-id", "r"] if name == "throughput" else []),
                                          *(["--path", "/x"] if name == "checkpoint_io" else [])]).probe == name  # fmt: skip


def test_given_a_bad_size_when_run_then_a_fail_result_names_the_option_not_a_traceback(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "infra_probes", "storage", "--path", str(tmp_path), "--size", "huge", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == EXIT_CODES[ProbeVerdict.FAIL]
    assert "Traceback" not in proc.stderr + proc.stdout
    result = ProbeResult.load(out)
    assert result.verdict == ProbeVerdict.FAIL and "--size 'huge'" in result.reason


def test_given_a_bad_target_expression_when_run_then_fail_explains_the_syntax(tmp_path: Path) -> None:
    result = execute(build_parser().parse_args(["storage", "--path", str(tmp_path), "--target", "fast please"]))
    assert result.verdict == ProbeVerdict.FAIL and "METRIC OP VALUE" in result.reason


def test_given_an_unwritable_out_path_when_emitting_then_exit_2_with_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "infra_probes", "storage", "--path", str(tmp_path / "none"),
         "--out", str(tmp_path / "file" / "r.json")],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "cannot be written" in proc.stderr and "Traceback" not in proc.stderr


def test_given_the_instance_type_env_when_resolved_then_it_is_used_without_asking_imds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(INSTANCE_TYPE_ENV, "p5.48xlarge")
    assert resolve_instance_type(None) == "p5.48xlarge"
    assert resolve_instance_type("p4de.24xlarge") == "p4de.24xlarge"


def test_given_dev_shm_when_its_file_system_is_read_then_tmpfs_is_reported() -> None:
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm here")
    info = filesystem_of(Path("/dev/shm"))
    assert info["fs_type"] == "tmpfs" and info["capacity_bytes"] > 0
    assert filesystem_of(Path("/dev/shm/not/yet/created"))["fs_type"] == "tmpfs"
