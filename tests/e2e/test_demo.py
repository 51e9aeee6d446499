"""``rlinf-bench demo --json`` end to end (a smaller budget than ``make demo``, the same flow).

The two checkpoints carry the scripted expert at noise 1.5 (step 100) and 0 (step 200): the second must
come out ``above`` the first, paired over initial states, with the flipped states listed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_bench.contracts import CheckpointReport
from tests.e2e.conftest import rlinf_bench

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def test_demo_evaluates_two_checkpoints_and_compares_the_second_with_the_first(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    # no videos: test_pipeline checks them; here they would only render the expert's frames
    cli = rlinf_bench("demo", "--out", str(out), "--json", "--trials", "1", "--videos", "0", timeout=1800)
    assert cli.returncode == 0, cli.stderr[-3000:]
    doc = cli.json()
    assert set(doc) == {"executions", "tracking_uri", "report", "outbox", "failures"}
    assert [e["checkpoint"]["global_step"] for e in doc["executions"]] == [100, 200]
    assert all(e["status"] == "SUCCEEDED" for e in doc["executions"]) and doc["failures"] == []
    assert Path(doc["report"]).is_file() and len(doc["outbox"]["email"]) == 2 and len(doc["outbox"]["slack"]) == 2
    second = CheckpointReport.load(out / "reports" / f"{doc['executions'][1]['name']}.json")
    previous = [v for s in second.suites for v in s.verdicts if v.kind == "previous"]
    assert previous and previous[0].reference_label and previous[0].paired  # compared with step 100, paired
    assert previous[0].value.value == "above", previous[0]
    first = CheckpointReport.load(out / "reports" / f"{doc['executions'][0]['name']}.json")
    before, after = first.suites[0].success_rate_mean, second.suites[0].success_rate_mean
    assert before is not None and after is not None and before < after  # the SR-vs-step line rises
    flips = second.suites[0].flips
    assert flips and all(f.direction == "to_success" for f in flips)
    assert "flipped:" in cli.stderr and f"states {flips[0].init_state}" in cli.stderr  # listed in the output
    # The probes ran as Jobs: gpu says why it is not available on a CPU, nccl measured over gloo.
    probes = {p.probe: p for p in second.probes}
    assert set(probes) == {"storage", "checkpoint_io", "gpu", "nccl"}
    assert probes["gpu"].verdict.value == "not_available" and probes["gpu"].reason
    for name in ("storage", "checkpoint_io"):  # they measured (pass or fail on speed), not refused their input
        assert "bad input" not in probes[name].reason and "does not exist" not in probes[name].reason
    # it says in plain words what the demo policy is
    assert "a scripted expert with simulator access at two noise levels, not a learned policy" in cli.stderr
    assert json.loads(Path(doc["outbox"]["slack"][1]).read_text())["blocks"]
