"""The summary of a demo-like second checkpoint: short, one link a person can open, numbers for people."""

from __future__ import annotations

from rlinf_bench.baselines import get_baselines
from rlinf_bench.contracts import CheckpointReport, Measurement, ProbeResult, ProbeVerdict, Target
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.reporting.messages import summary_notification
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.runfactory import checkpoint, make_run

LOCAL_HTML = "/home/me/demo-out/report/report.html"


def _demo_probes() -> list[ProbeResult]:
    """What the demo's four probes report on a CPU machine (values as the probes wrote them)."""
    return [
        ProbeResult(
            probe="storage",
            values={
                "write_mb_s": Measurement(value=255.47282222588046, unit="MB/s"),
                "read_mb_s": Measurement(value=475.771, unit="MB/s"),
            },
            verdict=ProbeVerdict.NOT_AVAILABLE,
            reason="no target: pass --target-mb-s or the file system's capacity",
        ),
        ProbeResult(
            probe="checkpoint_io",
            values={"save_s": Measurement(value=0.1234, unit="s"), "load_s": Measurement(value=0.0456, unit="s")},
            target=Target(metric="save_s", op="<", value=60, unit="s", source="docs/probes.md"),
            verdict=ProbeVerdict.PASS,
        ),
        ProbeResult(probe="gpu", verdict=ProbeVerdict.NOT_AVAILABLE, reason="no NVIDIA GPU visible (nvidia-smi)"),
        ProbeResult(
            probe="nccl",
            values={
                "busbw_gbps": Measurement(value=1.2345, unit="GB/s"),
                "ranks": Measurement(value=2.0, unit="count"),
            },
            verdict=ProbeVerdict.NOT_AVAILABLE,
            reason="gloo backend: no NCCL target applies",
        ),
    ]


def _demo_report(step: int, history: list[CheckpointReport]) -> CheckpointReport:
    # The demo's budget: libero_spatial tasks 0 and 1, 3 trials, 3 runs, 20 max steps; the toy policy fails.
    runs = [make_run({0: [0, 0, 0], 1: [0, 0, 0]}, run_index=i, ckpt=checkpoint(step, "demo")) for i in range(3)]
    runs = [r.model_copy(update={"protocol": r.protocol.model_copy(update={"max_steps": 20})}) for r in runs]
    report = aggregate_checkpoint([SourcedRun(f"{step}-{r.run_index}", r) for r in runs])
    report.probes = _demo_probes()
    report.infra = infra_checks(report.probes)
    return apply_verdicts(report, get_baselines(["libero/openvla-oft-rlinf"]), history)


def _second_checkpoint() -> CheckpointReport:
    first = _demo_report(100, [])
    second = _demo_report(200, [first])
    second.links = {
        "results": "s3://rlinf-bench-local/results/demo-s200",
        "report_site": "s3://rlinf-bench-local/results/demo-s200/report/site/index.html",
        "report_json": "s3://rlinf-bench-local/results/demo-s200/report/checkpoint_report.json",
        "mlflow_run": "0123456789abcdef",
        "report_url": LOCAL_HTML,
    }
    return second


def test_the_demos_second_checkpoint_summary_is_short_with_one_link_and_no_debug_dump() -> None:
    note = summary_notification(_second_checkpoint())
    lines = note.text.rstrip("\n").splitlines()
    assert len(lines) <= 25, note.text
    # One link, the one a person can open here; no s3:// URI to click in vain.
    assert f"Report: {LOCAL_HTML}" in lines and "s3://rlinf-bench-local" not in note.text
    assert "0123456789abcdef" not in note.text
    # Numbers for people; no measured value called not_available, no empty metric, no 'count' unit.
    for debris in ("255.47282222588046", "475.771", "gpu.—", "None", "2.0 count", "not_available", "ranks"):
        assert debris not in note.text, debris
    assert "checkpoint_io.save_s: 0.123 s (target < 60 s): pass" in note.text
    assert "Infrastructure, 4 probes: 1 passed, 2 measured without a target, 1 nothing measured" in note.text


def test_its_headline_claims_no_within_and_its_verdicts_say_why_nothing_was_decided() -> None:
    note = summary_notification(_second_checkpoint())
    assert "within" not in note.subject
    assert note.subject.endswith("SR 0.0% — no decisive verdict: 1 not comparable, 1 inconclusive")
    assert (
        "≠ not comparable vs libero/openvla-oft-rlinf: measured under another protocol: max steps 20 vs 512"
        in note.text
    )
    assert "◇ inconclusive (underpowered: sees drops ≥ " in note.text and "vs previous (global_step 100)" in note.text


def test_the_slack_payload_carries_the_same_lines_and_the_path_as_code() -> None:
    note = summary_notification(_second_checkpoint())
    blocks = note.slack["blocks"]
    assert blocks[-1]["type"] == "context" and f"`{LOCAL_HTML}`" in blocks[-1]["elements"][0]["text"]
    text = str(blocks)
    assert "not_available" not in text and "255.47282222588046" not in text and "s3://rlinf-bench-local" not in text
