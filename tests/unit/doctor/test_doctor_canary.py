"""The doctor's ``canary.sim`` check plays the canary through the runner the ``sim_canary`` probe uses: the same
child command, the same reading of its verdict, each caller naming its own lever."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from infra_probes.probe_cli import build_parser, execute
from rlinf_bench.contracts import ProbeVerdict
from rlinf_bench.doctor.context import DoctorContext, Target
from rlinf_bench.doctor.model import CheckStatus
from rlinf_doctor import canary_runner as canary
from rlinf_doctor import checks_canary
from tests.unit.infra_probes.test_sim_canary_probe import _doc

CANARY_CHILD = ["-m", "eval_runner.sim_canary", "--json"]


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The canary's child process, played by a stand-in; ``child[0]`` says what it does this time."""
    script: list[Any] = [_doc([])]
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd[1:])
        what = script[0]
        if what == "hang":
            raise subprocess.TimeoutExpired(cmd, kw["timeout"])
        if what == "crash":
            return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="Traceback\nRuntimeError: mujoco exploded")
        return subprocess.CompletedProcess(cmd, int(not what["verdict"]["ok"]), stdout=json.dumps(what), stderr="")

    monkeypatch.setattr(canary.subprocess, "run", fake_run)
    monkeypatch.setattr(checks_canary, "_package_dir", lambda: Path("/site-packages/libero/libero"))
    script.append(calls)
    return script


def _doctor() -> Any:
    return checks_canary.check_sim_canary(DoctorContext(target=Target.LOCAL, only=["canary"], canary_timeout_s=5))


def test_given_moved_episodes_then_doctor_and_probe_both_name_them_from_one_child_command(child: list[Any]) -> None:
    child[0] = _doc(["task 0 state 1: state differs from step 50 on"])

    doctor = _doctor()
    probe = execute(build_parser().parse_args(["sim_canary", "--json"]))

    assert child[1] == [CANARY_CHILD, CANARY_CHILD]
    assert doctor.status is CheckStatus.FAIL and "task 0 state 1: state differs from step 50 on" in doctor.measured
    assert "make_sim_canary_reference.py" in doctor.fix
    assert probe.verdict == ProbeVerdict.FAIL and probe.details["moved"] == doctor.details["moved"]


@pytest.mark.parametrize(
    ("what", "message", "lever"),
    [
        ("hang", "did not finish in 5 s", "RLINF_BENCH_CANARY_TIMEOUT_S"),
        ("crash", "exited 1 without a verdict: Traceback | RuntimeError: mujoco exploded", "doctor --only libero"),
    ],
)
def test_given_a_canary_that_gives_no_verdict_then_the_doctor_names_why_and_its_lever(
    child: list[Any], what: str, message: str, lever: str
) -> None:
    child[0] = what
    result = _doctor()
    assert result.status is CheckStatus.FAIL and message in result.measured and lever in result.fix
