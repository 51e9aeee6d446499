"""`rlinf-bench pipeline` never ends in exit 0 with a failed run or probe, and says so without contradiction;
a config listing a probe that cannot start is refused before anything is deployed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.errors import ConfigError
from rlinf_local.executions import ExecutionSummary, Failure
from rlinf_local.pipeline_command import PipelineOutcome, require_config
from rlinf_local.runs import print_outcome
from rlinf_local.status_command import format_status

PROBE_FAILED = Failure(what="probe storage", reason="JobStartFailed: python -m infra_probes exited with status 2")


def test_a_succeeded_execution_with_a_failed_probe_is_not_ok_and_is_shown_failed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = ExecutionSummary(name="exec", status="SUCCEEDED", runs_done=3, failures=[PROBE_FAILED])
    outcome = PipelineOutcome(executions=[summary])
    assert not outcome.ok  # exit 1
    print_outcome(outcome)
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("FAILED") and "exec" in first
    assert "probe storage" in out
    assert "SUCCEEDED " not in format_status([summary])


def test_a_succeeded_execution_with_a_failed_run_is_not_ok() -> None:
    summary = ExecutionSummary(name="exec", status="SUCCEEDED", runs_done=2, runs_failed=1)
    assert not PipelineOutcome(executions=[summary]).ok
    assert PipelineOutcome(executions=[ExecutionSummary(name="e", status="SUCCEEDED", runs_done=3)]).ok


def test_a_pipeline_config_with_a_probe_that_cannot_start_is_refused_before_anything_starts(tmp_path: Path) -> None:
    config = tmp_path / "intake.yaml"
    config.write_text("suites: [libero_spatial]\nprobes: [gpu, storage]\n")
    with pytest.raises(ConfigError) as info:
        require_config(config)  # `rlinf-bench pipeline --config` exits 2 on it
    assert "storage" in str(info.value) and "--path" in str(info.value) and str(config) in str(info.value)
