"""The simulator canary's comparison and its doctor check, without a simulator."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from eval_runner.sim_canary import CANARY, Fingerprint, compare, load_reference, parse_perturb
from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckStatus
from rlinf_doctor import canary_runner, checks_canary
from rlinf_doctor.check_runner import run_doctor


def test_given_the_shipped_reference_then_it_covers_the_canary_set_on_recorded_versions() -> None:
    ref = load_reference()
    assert ref.canary == CANARY and not ref.perturbed
    assert {e.key for e in ref.episodes} == {f"{t}/{s}" for t in CANARY.tasks for s in CANARY.states}
    assert set(ref.versions) == {"mujoco", "robosuite", "rlinf-libero", "numpy"}
    assert all(e.success for e in ref.episodes)  # the expert at noise 0 places the bowl: a canary that can fail
    assert compare(ref, ref).ok


def test_given_a_moved_episode_and_new_versions_then_the_verdict_names_both() -> None:
    ref = load_reference()
    here = ref.model_copy(deep=True)
    here.versions["mujoco"] = "3.9.0"
    moved = here.episodes[1]
    moved.steps += 3
    moved.state_sha256["50"] = "0" * 64
    moved.state_sha256["75"] = "1" * 64
    verdict = compare(here, ref)
    assert not verdict.ok
    assert verdict.moved == [
        f"task {moved.task_id} state {moved.init_state}: success/steps success at {moved.steps} "
        f"(reference success at {moved.steps - 3}); state differs from step 50 on"
    ]
    assert f"mujoco {ref.versions['mujoco']} -> 3.9.0" in verdict.summary
    assert verdict.versions_reference == ref.versions and verdict.versions_here["mujoco"] == "3.9.0"


def test_given_same_versions_but_a_moved_state_then_the_summary_says_what_else_it_could_be() -> None:
    ref = load_reference()
    here = ref.model_copy(deep=True)
    here.episodes[0].state_sha256["25"] = "0" * 64
    verdict = compare(here, ref)
    assert not verdict.ok and "same versions" in verdict.summary and "physics setting" in verdict.summary


def test_given_an_unknown_perturbation_then_refused_naming_the_valid_ones() -> None:
    assert parse_perturb(["timestep=0.0025"]) == {"timestep": 0.0025}
    with pytest.raises(SystemExit, match="control_freq"):
        parse_perturb(["gravity=1"])


def _fake_child(monkeypatch: pytest.MonkeyPatch, verdict: dict[str, Any]) -> None:
    ref: Fingerprint = load_reference()

    def run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert cmd[1:] == ["-m", "eval_runner.sim_canary", "--json"]  # the runner's command, not an import
        doc = {"verdict": verdict, "fingerprint": ref.model_dump()}
        return subprocess.CompletedProcess(cmd, 0 if verdict["ok"] else 1, json.dumps(doc) + "\n", "")

    monkeypatch.setattr(canary_runner.subprocess, "run", run)


def test_given_doctor_only_canary_and_a_moved_episode_then_it_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    ref = load_reference()
    here = ref.model_copy(deep=True)
    here.episodes[2].state_sha256["75"] = "0" * 64
    _fake_child(monkeypatch, compare(here, ref).model_dump())
    report = run_doctor(DoctorContext(only=["canary"]))
    [result] = report.checks
    assert result.name == "canary.sim" and result.status is CheckStatus.FAIL
    assert f"task {here.episodes[2].task_id} state {here.episodes[2].init_state}" in result.measured
    assert "make_sim_canary_reference.py" in (result.fix or "")


def test_given_doctor_without_only_canary_then_the_canary_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canary_runner.subprocess, "run", lambda *a, **k: pytest.fail("the canary ran"))
    result = checks_canary.check_sim_canary(DoctorContext(only=[]))
    assert result.status is CheckStatus.SKIP and "--only canary" in (result.fix or "")


def test_given_reference_file_edited_then_load_reference_reads_the_given_path(tmp_path: Path) -> None:
    ref = load_reference()
    path = tmp_path / "ref.json"
    edited = ref.model_copy(deep=True)
    edited.episodes[0].steps = 99
    path.write_text(edited.model_dump_json())
    verdict = compare(ref, load_reference(path))
    assert not verdict.ok and verdict.moved[0].startswith(f"task {ref.episodes[0].task_id} state ")
