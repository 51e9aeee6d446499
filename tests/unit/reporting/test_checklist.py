"""The validation checklist never misleads: pass, fail, not decided (with why) or not run, each line saying
what was measured; the demo's small probes read "demo size, not a verdict" in every renderer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlinf_bench.baselines import get_baselines, infra_target
from rlinf_bench.contracts import CheckpointReport, Measurement, ProbeResult, ProbeVerdict
from rlinf_bench.reporting.checklist import ChecklistItem, validation_checklist
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.reporting.infra_strip import infra_strip
from rlinf_bench.reporting.messages import summary_notification
from rlinf_bench.reporting.site import write_site
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs

NCCL = "NCCL bandwidth matches expectations for instance type"
CKPT = "Checkpoint save/load time is acceptable (< 60s)"
RANGE = "Success rates are in expected range (compare to paper)"
GPU = "GPU utilization > 70% during policy updates"
MIB = 1 << 20


def storage(size_bytes: int, write_mb_s: float) -> ProbeResult:
    target = infra_target("storage", "write_mb_s")
    assert target is not None
    return ProbeResult(
        probe="storage",
        values={
            "write_mb_s": Measurement(value=write_mb_s, unit="MB/s"),
            "size_mb": Measurement(value=8.39, unit="MB"),
        },
        target=target,
        verdict=ProbeVerdict.PASS if write_mb_s > target.value else ProbeVerdict.FAIL,
        settings={"path": "/scratch/storage", "size_bytes": size_bytes, "block_bytes": MIB},
        wall_s=0.4,
    )


def checkpoint_io(params: float, save_s: float) -> ProbeResult:
    target = infra_target("checkpoint_io", "save_s")
    assert target is not None
    return ProbeResult(
        probe="checkpoint_io",
        values={
            "save_s": Measurement(value=save_s, unit="s"),
            "load_s": Measurement(value=save_s / 2, unit="s"),
            "size_gb": Measurement(value=params * 2 / 1e9, unit="GB"),
        },
        target=target,
        verdict=ProbeVerdict.PASS if save_s < 60 else ProbeVerdict.FAIL,
        settings={"path": "/scratch/ckpt", "params": int(params), "dtype": "bfloat16"},
        wall_s=2.6,
    )


def nccl_over_gloo() -> ProbeResult:
    """What the demo's nccl probe writes on a CPU: a measured busbw, no target (as the probe words it)."""
    return ProbeResult(
        probe="nccl",
        values={
            "busbw_gbps": Measurement(value=0.841, unit="GB/s"),
            "algbw_gbps": Measurement(value=0.841, unit="GB/s"),
            "ranks": Measurement(value=2, unit="count"),
        },
        verdict=ProbeVerdict.NOT_AVAILABLE,
        reason="measured, but no target is known here; pass --target METRIC>=VALUE to judge. gloo on CPUs: checks "
        "the probe itself, says nothing about NVLink/EFA",
        settings={"backend": "gloo", "nproc": 2, "verdict_bytes": 4 * MIB},
        details={"backend": "gloo", "verdict_bytes": 4 * MIB},
        wall_s=11.8,
    )


def gpu_without_gpu() -> ProbeResult:
    return ProbeResult(probe="gpu", verdict=ProbeVerdict.NOT_AVAILABLE, reason="NVML unavailable: no NVIDIA GPU here")


def demo_probes() -> list[ProbeResult]:
    """The demo's four probes as its small budget runs them (rlinf_local/budget.py)."""
    return [storage(8 * MIB, 420.0), checkpoint_io(4e6, 0.0126), gpu_without_gpu(), nccl_over_gloo()]


def report_with(probes: list[ProbeResult], *, max_steps: int | None = None) -> CheckpointReport:
    rng = np.random.default_rng(3)
    runs = heterogeneous_runs(rng, np.full((10, 20), 0.9), ckpt=checkpoint(200))
    if max_steps is not None:  # the demo's short horizon: the paper's number cannot be compared with it
        runs = [
            r.model_copy(
                update={"protocol": r.protocol.model_copy(update={"max_steps": max_steps, "overrides": ["max_steps"]})}
            )
            for r in runs
        ]
    report = aggregate_checkpoint([SourcedRun(str(r.run_index), r) for r in runs])
    report.probes = probes
    report.infra = infra_checks(probes)
    return apply_verdicts(report, get_baselines(["libero/openvla-oft-rlinf"]))


def items(report: CheckpointReport) -> dict[str, ChecklistItem]:
    return {i.item: i for i in validation_checklist([report])}


def test_a_measured_busbw_without_a_target_is_not_decided_never_not_run() -> None:
    nccl = items(report_with(demo_probes()))[NCCL]

    assert nccl.status == "not decided"
    assert nccl.why.startswith("no target here") and "gloo on CPUs" in nccl.why
    # what was measured: the value, the message size, the backend and ranks, how long it took
    assert "busbw_gbps 0.841 GB/s" in nccl.evidence and "all-reduce at 4 MiB over gloo, 2 ranks" in nccl.evidence


def test_a_not_comparable_verdict_is_not_decided_and_says_why() -> None:
    sr = items(report_with([], max_steps=130))[RANGE]

    assert sr.status == "not decided"
    assert "not comparable" in sr.why and "max steps 130 vs 512" in sr.why


def test_a_checkpoint_probe_at_demo_size_is_not_a_verdict_and_says_what_it_saved() -> None:
    ckpt = items(report_with(demo_probes()))[CKPT]

    assert ckpt.status == "not decided"
    assert ckpt.why.startswith("demo size, not a verdict: ran at 4M parameters; a verdict needs ≥ 7B")
    assert "a 4M-parameter bfloat16 state dict (8 MB)" in ckpt.evidence and "save_s 0.0126 s" in ckpt.evidence


def test_a_checkpoint_probe_at_the_briefs_size_passes_naming_the_size_and_the_seconds() -> None:
    ckpt = items(report_with([checkpoint_io(7.5e9, 41.0)]))[CKPT]

    assert ckpt.status == "pass" and ckpt.why == ""
    assert (
        "save_s 41 s (target < 60 s)" in ckpt.evidence
        and "a 7.5B-parameter bfloat16 state dict (15 GB)" in ckpt.evidence
    )


def test_the_demos_checklist_says_not_run_only_where_nothing_ran() -> None:
    checklist = validation_checklist([report_with(demo_probes(), max_steps=130)])
    status = {i.item: i.status for i in checklist}

    assert set(status.values()) <= {"pass", "fail", "not decided", "not run"}
    # the GPU probe measured nothing (no GPU), RoboTwin and MLflow did not happen: those alone are not run
    assert sorted(k for k, v in status.items() if v == "not run") == sorted(
        [GPU, "RoboTwin evaluation runs (if applicable)", "Results are logged to MLflow for comparison"]
    )
    assert all(i.why for i in checklist if i.status in ("not decided", "not run"))


@pytest.mark.parametrize(("size", "word"), [(8 * MIB, "demo size, not a verdict"), (256 * MIB, "FAIL")])
def test_a_slow_storage_write_fails_only_at_a_size_that_measures_throughput(size: int, word: str) -> None:
    report = report_with([storage(size, 120.0)])
    (chip,) = infra_strip(report.infra)
    text = summary_notification(report).text

    assert f"storage.write_mb_s: 120 MB/s (target > 500 MB/s): {word}" in text
    assert chip.state == ("fail" if word == "FAIL" else "notdecided")


def test_the_message_header_counts_the_probes_its_lines_show() -> None:
    note = summary_notification(report_with(demo_probes()))
    lines = note.text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Infrastructure"))
    block = lines[head + 1 :]

    assert lines[head] == ("Infrastructure, 4 probes: 2 not decided, 1 measured without a target, 1 nothing measured")
    for probe in ("storage", "checkpoint_io", "gpu", "nccl"):
        assert any(line.strip().startswith(probe) for line in block), probe
    assert not any(line.endswith((": FAIL", ": pass")) for line in block)  # nothing judged at demo size
    slack = str(note.slack["blocks"])
    assert "demo size, not a verdict" in slack and "Infrastructure, 4 probes" in slack


def test_markdown_and_html_carry_the_same_words(tmp_path: Path) -> None:
    files = write_site([report_with(demo_probes(), max_steps=130)], tmp_path, baselines=[], title="t", pages=False)
    md = files.markdown.read_text()
    html = files.html.read_text()

    assert "| storage | write_mb_s | 420 MB/s | > 500 MB/s | demo size, not a verdict |" in md
    assert (
        "| Checkpoint save/load time is acceptable (\\< 60s) | not decided | demo size, not a verdict: ran at 4M" in md
    )
    assert f"| {NCCL} | not decided | no target here" in md
    assert '<span class="notdecided">not decided</span>' in html
    assert '<span class="chip notdecided" title="demo size, not a verdict: ran at 8 MiB' in html


def test_a_probe_without_recorded_settings_keeps_its_verdict() -> None:
    """Results written before probes recorded their settings cannot be sized: judged as they were."""
    old = checkpoint_io(4e6, 0.0126).model_copy(update={"settings": {}})
    ckpt = items(report_with([old]))[CKPT]

    assert ckpt.status == "pass"
