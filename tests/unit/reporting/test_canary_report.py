"""The simulator canary's verdict in the report's "What changed besides the weights" and, on drift only,
in the summary message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_aws.state_aggregate import aggregate
from rlinf_bench.contracts import CheckpointReport, Measurement, ProbeResult, ProbeVerdict
from rlinf_bench.contracts.workflow import AggregateInput, OutcomeStatus, RunOutcome
from rlinf_bench.document_store import Storage
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.reporting.markdown import checkpoint_markdown
from rlinf_bench.reporting.messages import summary_notification
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from tests.unit.pipeline.test_aggregate import ok, request
from tests.unit.stats.runfactory import checkpoint, make_run

HERE = {"mujoco": "3.9.0", "numpy": "1.26.4", "rlinf-libero": "0.1.3", "robosuite": "1.4.1"}
REF = {**HERE, "mujoco": "3.3.7"}


def _canary(moved: list[str]) -> ProbeResult:
    summary = (
        f"{len(moved)} of 4 canary episodes moved: the physics differs from the reference's; "
        "versions changed: mujoco 3.3.7 -> 3.9.0"
        if moved
        else "all 4 canary episodes match the reference (states rounded to 3 decimals)"
    )
    return ProbeResult(
        probe="sim_canary",
        values={"moved_episodes": Measurement(value=len(moved), unit="episodes")},
        verdict=ProbeVerdict.FAIL if moved else ProbeVerdict.PASS,
        reason=summary,
        details={
            "summary": summary,
            "moved": moved,
            "versions_here": HERE if moved else REF,
            "versions_reference": REF,
        },
    )


def _report(probe: ProbeResult) -> CheckpointReport:
    runs = [make_run({0: [1, 0, 1]}, run_index=0, ckpt=checkpoint(100, "exp"))]
    report = aggregate_checkpoint([SourcedRun("r0", runs[0])])
    report.probes = [probe]
    report.infra = infra_checks(report.probes)
    return report


DRIFT = ["task 0 state 0: success/steps failure at 100 (reference success at 83); state differs from step 25 on"]


def test_a_drift_is_in_what_changed_besides_the_weights_with_the_moved_episode_and_both_sides_versions() -> None:
    text = checkpoint_markdown(_report(_canary(DRIFT)))
    section = text.split("## What changed besides the weights", 1)[1]
    assert "simulator canary: DRIFT" in section
    assert "task 0 state 0: success/steps failure at 100 (reference success at 83)" in section
    assert "versions here: mujoco 3.9.0" in section
    assert "versions of the reference: mujoco 3.3.7" in section


def test_a_pass_is_in_the_report_but_not_in_the_summary_message() -> None:
    report = _report(_canary([]))
    section = checkpoint_markdown(report).split("## What changed besides the weights", 1)[1]
    assert "simulator canary: pass (all 4 canary episodes match the reference" in section
    assert "canary" not in summary_notification(report).text


def test_a_drift_is_in_the_summary_message_naming_the_episode() -> None:
    note = summary_notification(_report(_canary(DRIFT))).text
    assert "simulator canary: DRIFT" in note
    assert "task 0 state 0" in note and "mujoco 3.3.7" in note
    assert "sim_canary.moved_episodes" not in note  # said once, in the canary's words


# A canary result file whose details are not the expected shape: a stated line, and the report still comes out.
MALFORMED = [
    ({"moved": 5}, "details.moved: Input should be a valid list"),
    ({"moved": [{"task": 0}]}, "details.moved.0: Input should be a valid string"),
    ({"moved": ["x"], "versions_here": ["mujoco", "3.9"]}, "details.versions_here: Input should be a valid dictionary"),
    ({"summary": {"nested": True}, "versions_reference": {"mujoco": 3.3}}, "details.summary: Input should be"),
    ({"episodes": -4}, "details.episodes: Input should be greater than or equal to 0"),
]


@pytest.mark.parametrize(("details", "why"), MALFORMED)
@pytest.mark.parametrize("verdict", ["fail", "pass"])
def test_a_malformed_canary_result_is_stated_unreadable_and_the_checkpoints_report_still_comes_out(
    tmp_path: Path, details: dict[str, object], why: str, verdict: str
) -> None:
    probe_file = tmp_path / "sim_canary.json"
    probe_file.write_text(
        json.dumps(
            {"schema_version": "1.0", "probe": "sim_canary", "verdict": verdict, "reason": "r", "details": details}
        )
    )
    probe = RunOutcome(status=OutcomeStatus.SUCCEEDED, kind="probe", probe="sim_canary", result_uri=str(probe_file))
    runs = [ok(tmp_path, i) for i in range(3)]
    out = aggregate(
        AggregateInput(
            request=request(tmp_path), eval_items=[], result_root=str(tmp_path / "root"), outcomes=[runs, [probe]]
        ),
        storage=Storage(),
    )
    report = CheckpointReport.load(out.report_uri)
    md = (Path(out.report_uri).parent / "report.md").read_text()
    assert "simulator canary result unreadable: " in md and why in md
    site = Path(report.links["report_site"]).parent / "checkpoints" / "exp-step_100.html"
    assert "simulator canary result unreadable: " in site.read_text()
    note = summary_notification(report).text
    assert "simulator canary result unreadable: " in note and why in note
