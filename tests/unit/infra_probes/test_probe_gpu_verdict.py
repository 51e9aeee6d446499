"""How the live gpu probe judges what it sampled: SM activity first, health always."""

from __future__ import annotations

from typing import Any

from infra_probes.common import run_probe
from infra_probes.gpu import GpuSettings, _outcome
from rlinf_bench.contracts import ProbeVerdict


def device(util: float, sm: float | None, *, problems: list[str] | None = None) -> dict[str, Any]:
    series: dict[str, list[float]] = {"util_pct": [util, util], "memory_used_pct": [85.0, 85.0]}
    if sm is not None:
        series |= {"sm_active_pct": [sm, sm], "tensor_active_pct": [0.0, 0.0]}
    return {"index": 0, "gpm_supported": sm is not None, "series": series, "health": {"problems": problems or []}}


def judge(*devices: dict[str, Any]) -> Any:
    outcome = _outcome(list(devices), GpuSettings())
    return run_probe("gpu", {}, lambda: outcome)


def test_given_busy_nvml_but_idle_sms_when_judged_then_sm_activity_decides_and_fails() -> None:
    result = judge(device(98.0, 17.0), device(99.0, 18.0))
    assert result.verdict == ProbeVerdict.FAIL
    assert result.target is not None and result.target.metric == "sm_active_pct"
    assert result.values["util_pct"].value == 98.5 and result.values["sm_active_pct"].value == 17.5


def test_given_a_gpu_without_gpm_when_judged_then_nvml_utilization_decides_and_the_reason_warns() -> None:
    result = judge(device(95.0, None))
    assert result.verdict == ProbeVerdict.PASS
    assert result.target is not None and result.target.metric == "util_pct"
    assert "no GPM" in result.reason


def test_given_a_fatal_xid_when_judged_then_the_gpu_fails_even_when_fully_busy() -> None:
    result = judge(device(100.0, 96.0, problems=["GPU 0: fatal Xid [79] during the window"]))
    assert result.verdict == ProbeVerdict.FAIL and "Xid [79]" in result.reason


def test_given_memory_use_when_judged_then_the_brief_memory_target_is_an_extra_check() -> None:
    result = judge(device(99.0, 96.0))
    checks = result.details["checks"]
    assert [c["target"]["metric"] for c in checks] == ["memory_used_pct"] and checks[0]["passed"] is True
