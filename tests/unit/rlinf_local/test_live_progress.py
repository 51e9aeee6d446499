"""Progress while an execution runs: counted from its Plan and the result files the Jobs rewrite as they go."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.contracts import EvalRun, PerturbationAxis, RunStatus
from rlinf_local.eta import EtaEstimate
from rlinf_local.executions import ExecutionSummary
from rlinf_local.live_progress import LiveProgress, ProgressLine, read_progress
from rlinf_local.status_command import format_status
from tests.unit.stats.perturbedfactory import perturbed_run
from tests.unit.stats.runfactory import CKPT

STARTED = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)


class FakeStepFunctions:
    """describe_execution and get_execution_history of one execution whose Plan state has (or has not) exited."""

    def __init__(self, plan: dict[str, Any] | None) -> None:
        self.plan = plan

    def describe_execution(self, executionArn: str) -> dict[str, Any]:
        return {"status": "RUNNING", "startDate": STARTED, "name": "x", "input": "{}"}

    def get_execution_history(self, **_: Any) -> dict[str, Any]:
        events: list[dict[str, Any]] = [{"type": "ExecutionStarted"}]
        if self.plan is not None:
            details = {"name": "Plan", "output": json.dumps(self.plan)}
            events.append({"type": "TaskStateExited", "stateExitedEventDetails": details})
        return {"events": events}


def _plan(tmp_path: Path) -> dict[str, Any]:
    def run(k: int) -> dict[str, Any]:
        uri = str(tmp_path / f"run{k}.json")
        return {
            "kind": "eval",
            "result_uri": uri,
            "run": {"suite": "libero_spatial", "task_ids": [0, 1], "trials_per_task": 5},
        }

    probes = [{"kind": "probe", "result_uri": str(tmp_path / f"{p}.json")} for p in ("gpu", "storage")]
    return {"eval_items": [run(0), run(1), run(2)], "probe_items": probes}


def _result(tmp_path: Path, k: int, status: str, episodes: int) -> None:
    (tmp_path / f"run{k}.json").write_text(json.dumps({"status": status, "episodes": episodes}))


def test_given_one_run_done_and_one_half_way_then_runs_probes_and_episodes_are_counted(tmp_path: Path) -> None:
    _result(tmp_path, 0, "complete", 10)
    _result(tmp_path, 1, "incomplete", 5)  # a snapshot the Job rewrites as episodes finish
    (tmp_path / "gpu.json").write_text("{}")

    progress = read_progress(FakeStepFunctions(_plan(tmp_path)), None, "arn", now=STARTED.timestamp() + 150)

    assert progress is not None
    assert (progress.runs_finished, progress.runs_total) == (1, 3)
    assert (progress.probes_finished, progress.probes_total) == (1, 2)
    assert (progress.episodes_done, progress.episodes_total) == (15, 30)
    assert progress.eta_s is None  # one reading cannot tell start-up from the episodes' pace (rlinf_local.eta)
    assert progress.line() == "runs 1/3 · probes 1/2 · episodes 15/30 (50 %) · 2m30s elapsed"
    progress.eta_s = 150.0
    assert progress.line().endswith(" · 2m30s elapsed · ETA 2m30s")


def test_given_a_half_written_result_file_then_it_counts_as_not_there_yet(tmp_path: Path) -> None:
    (tmp_path / "run0.json").write_text('{"status": "comp')

    progress = read_progress(FakeStepFunctions(_plan(tmp_path)), None, "arn", now=STARTED.timestamp() + 5)

    assert progress is not None and progress.episodes_done == 0 and progress.eta_s is None


def test_given_the_plan_has_not_finished_then_there_is_nothing_to_count_yet() -> None:
    assert read_progress(FakeStepFunctions(None), None, "arn") is None


def _robustness_plan(tmp_path: Path) -> dict[str, Any]:
    """One run of 2 tasks x 10 trials with the quick profile: one perturbed episode per task, 22 in all."""
    run = EvalRun(
        request_id="r",
        checkpoint=CKPT,
        suite="libero_spatial",
        run_index=0,
        seed=0,
        task_ids=[0, 1],
        trials_per_task=10,
        policy="builtin:zero",
        robustness="quick",
    )
    item = {"kind": "eval", "result_uri": str(tmp_path / "run0.json"), "run": run.model_dump(mode="json")}
    return {"eval_items": [item], "probe_items": []}


def _snapshot(tmp_path: Path, finished: int) -> None:
    """The run's result after ``finished`` episodes: the 20 standard ones first, then the 2 perturbed ones."""
    standard = {0: [1] * min(finished, 10), 1: [1] * min(max(finished - 10, 0), 10)}
    perturbed = {(PerturbationAxis.CAMERA, 2): {t: [1] for t in range(max(finished - 20, 0))}}
    result = perturbed_run({t: v for t, v in standard.items() if v}, perturbed)
    status = RunStatus.COMPLETE if finished == 22 else RunStatus.INCOMPLETE
    (tmp_path / "run0.json").write_text(result.model_copy(update={"status": status}).model_dump_json())


def test_given_a_run_with_robustness_then_its_perturbed_episodes_count_in_done_and_total_and_in_the_eta(
    tmp_path: Path,
) -> None:
    # GIVEN a run whose 22 episodes (20 standard, 2 perturbed) finish one every 10 s
    plan, eta = _robustness_plan(tmp_path), EtaEstimate()
    readings: dict[int, LiveProgress] = {}
    for finished in range(1, 23):
        _snapshot(tmp_path, finished)
        # WHEN the progress is read after each episode, and the ETA follows the readings
        progress = read_progress(FakeStepFunctions(plan), None, "arn", now=STARTED.timestamp() + 10 * finished)
        assert progress is not None
        progress.eta_s = eta.update(progress.elapsed_s, progress.episodes_done, progress.episodes_total)
        readings[finished] = progress

    # THEN the perturbed episodes are counted like the others, and the ETA sees them coming
    assert (readings[20].episodes_done, readings[20].episodes_total) == (20, 22)
    assert readings[20].eta_s == pytest.approx(20.0, abs=1.0)  # two more episodes at 10 s each
    assert readings[21].line().startswith("runs 0/1 · episodes 21/22 (95 %)")
    assert (readings[22].runs_finished, readings[22].episodes_done, readings[22].episodes_total) == (1, 22, 22)


def _progress(done: int) -> LiveProgress:
    return LiveProgress(runs_total=3, episodes_total=30, episodes_done=done, elapsed_s=10)


def test_off_a_terminal_a_line_is_written_per_change_at_most_every_interval_and_none_when_disabled() -> None:
    stream, now = io.StringIO(), [0.0]
    line = ProgressLine(stream=stream, min_interval_s=30, clock=lambda: now[0])
    line.show(_progress(0))
    now[0] = 10
    line.show(_progress(3))  # too soon
    now[0] = 40
    line.show(_progress(3))
    now[0] = 80
    line.show(_progress(3))  # nothing changed
    line.close()
    assert stream.getvalue().splitlines() == [_progress(0).line(), _progress(3).line()]
    assert "\r" not in stream.getvalue()

    quiet = io.StringIO()
    ProgressLine(enabled=False, stream=quiet).show(_progress(1))
    assert quiet.getvalue() == ""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_line_is_rewritten_in_place_and_ended_on_close() -> None:
    stream = Terminal()
    line = ProgressLine(stream=stream)
    line.show(_progress(1))
    line.show(_progress(2))
    line.close()
    assert stream.getvalue() == f"\r\033[K{_progress(1).line()}\r\033[K{_progress(2).line()}\n"


def test_status_of_a_running_execution_counts_from_its_progress_not_0_of_0() -> None:
    running = ExecutionSummary(name="demo-s100", status="RUNNING", progress=_progress(12))

    table = format_status([running])

    assert "0/0 of 3" in table and "episodes 12/30 (40 %)" in table
