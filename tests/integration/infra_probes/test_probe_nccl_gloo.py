"""The nccl probe over gloo: 2 real processes on loopback, the busbw formula, and a corrupted sum detected.

Runs the CLI in a subprocess, as a Job would: each run starts fresh ranks and a fresh rendezvous.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra_probes.probe_cli import build_parser, execute
from rlinf_bench.contracts import ProbeResult, ProbeVerdict

REPO = Path(__file__).resolve().parents[3]
SMALL = ["--backend", "gloo", "--nproc", "2", "-b", "4K", "-e", "256K", "-f", "8", "--verdict-bytes", "256K"]


def cli(*argv: str, env: dict[str, str] | None = None) -> tuple[int, ProbeResult]:
    proc = subprocess.run(
        [sys.executable, "-m", "infra_probes", *argv, "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, ProbeResult.from_json(proc.stdout)


@pytest.fixture(scope="module")
def clean_run() -> tuple[int, ProbeResult]:
    return cli("nccl", *SMALL, "--iters", "3", "--warmup", "1")


def test_given_two_gloo_ranks_when_swept_then_every_size_has_a_row_and_sums_are_right(
    clean_run: tuple[int, ProbeResult],
) -> None:
    rc, result = clean_run
    table: list[dict[str, Any]] = result.details["table"]
    assert [row["bytes"] for row in table] == [4 << 10, 32 << 10, 256 << 10]
    assert all(row["wrong"] == 0 for row in table)
    assert result.values["wrong_elements"].value == 0 and result.values["ranks"].value == 2
    # No target for a CPU run without an instance type: measured, but not judged.
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE and rc == 3
    assert "gloo" in result.reason


def test_given_the_table_when_checked_then_algbw_and_busbw_follow_nccl_tests(
    clean_run: tuple[int, ProbeResult],
) -> None:
    _, result = clean_run
    for row in result.details["table"]:
        algbw = row["bytes"] / (row["time_us"] * 1e-6) / 1e9
        assert row["algbw_gbps"] == pytest.approx(algbw)
        assert row["busbw_gbps"] == pytest.approx(algbw * 2 * (2 - 1) / 2)
    at = result.details["table"][-1]
    assert result.values["busbw_gbps"].value == pytest.approx(at["busbw_gbps"])
    assert result.details["verdict_bytes"] == 256 << 10


def test_given_a_target_when_given_on_the_command_line_then_the_1gib_style_verdict_uses_it(
    clean_run: tuple[int, ProbeResult],
) -> None:
    rc, result = cli("nccl", *SMALL, "--iters", "2", "--warmup", "0", "--target", "busbw_gbps>=1000000")
    assert result.verdict == ProbeVerdict.FAIL and rc == 1
    assert result.target is not None and result.target.unit == "GB/s"


def test_given_a_rank_that_corrupts_its_input_when_reduced_then_the_probe_fails_on_wrong_sums() -> None:
    rc, result = cli(
        "nccl", *SMALL, "--iters", "1", "--warmup", "0", "--inject-corruption", "1", "--target", "busbw_gbps>=0"
    )
    assert result.verdict == ProbeVerdict.FAIL and rc == 1
    assert "wrong elements" in result.reason and "corruption" in result.reason
    # One bad element per size, seen by both ranks.
    assert [row["wrong"] for row in result.details["table"]] == [2, 2, 2]


def test_given_an_expected_world_size_that_differs_when_run_then_fail_names_both_sizes() -> None:
    result = execute(build_parser().parse_args(["nccl", *SMALL, "--expected-world-size", "16"]))
    assert result.verdict == ProbeVerdict.FAIL
    assert "world size mismatch" in result.reason and "2 ranks" in result.reason and "16" in result.reason


def test_given_a_launcher_whose_peer_never_comes_when_joining_then_fail_reports_a_rendezvous_timeout() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    rc, result = cli("nccl", "--backend", "gloo", "--rendezvous-timeout-s", "2", env=env)
    assert result.verdict == ProbeVerdict.FAIL and rc == 1
    assert "rendezvous" in result.reason and f"127.0.0.1:{port}" in result.reason


def test_given_a_sweep_then_each_size_is_reported_on_stderr_as_it_finishes_and_stdout_holds_the_result() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "infra_probes", "nccl", *SMALL, "--iters", "2", "--warmup", "0", "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )

    sizes = [
        line for line in proc.stderr.splitlines() if line.startswith("nccl: ") and "all-reduce over 2 ranks" in line
    ]
    assert [line.split(" all-reduce")[0] for line in sizes] == ["nccl: 4 KiB", "nccl: 32 KiB", "nccl: 256 KiB"]
    assert sizes[-1].endswith("(3/3)") and "busbw" in sizes[-1]
    assert ProbeResult.from_json(proc.stdout).probe == "nccl"  # stdout: the result alone
