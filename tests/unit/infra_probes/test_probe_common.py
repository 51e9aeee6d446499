"""Shared probe logic: sizes, targets, verdicts, and bad input turning into a result instead of a traceback."""

from __future__ import annotations

import pytest

from infra_probes.common import Outcome, judge, m, parse_size, parse_target, run_probe, summary_percentiles
from infra_probes.nccl import NcclSettings, bus_bandwidth, sweep_sizes
from infra_probes.targets import default_nccl_target, resolve_target
from rlinf_bench.contracts import ProbeResult, ProbeVerdict, Target
from rlinf_bench.errors import ConfigError, ProbeError, ProbeUnavailableError


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1G", 1 << 30), ("512M", 512 << 20), ("64KiB", 64 << 10), ("4096", 4096), ("1.5G", 3 << 29), (8, 8)],
)
def test_given_a_size_like_nccl_tests_when_parsed_then_binary_multiples_are_used(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_given_a_size_that_is_not_one_when_parsed_then_the_error_names_the_option() -> None:
    with pytest.raises(ConfigError, match="--size 'lots'"):
        parse_size("lots", name="--size")


def test_given_a_target_text_when_parsed_then_metric_op_and_value_are_read() -> None:
    target = parse_target("busbw_gbps>=300")
    assert (target.metric, target.op, target.value) == ("busbw_gbps", ">=", 300.0)
    with pytest.raises(ConfigError, match="METRIC OP VALUE"):
        parse_target("busbw is high")


def test_given_a_target_when_judged_then_pass_fail_and_missing_metric_are_distinguished() -> None:
    target = Target(metric="save_s", op="<", value=60, unit="s", source="brief")
    assert judge({"save_s": m(12, "s")}, target)[0] == ProbeVerdict.PASS
    verdict, reason = judge({"save_s": m(75, "s")}, target)
    assert verdict == ProbeVerdict.FAIL and "75" in reason and "brief" in reason
    assert judge({"load_s": m(1, "s")}, target)[0] == ProbeVerdict.NOT_AVAILABLE
    assert judge({"save_s": m(1, "s")}, None)[0] == ProbeVerdict.NOT_AVAILABLE


def test_given_probe_errors_when_run_then_unavailable_and_failure_become_verdicts_with_reasons() -> None:
    def unavailable() -> Outcome:
        raise ProbeUnavailableError("no GPU here")

    def broken() -> Outcome:
        raise ProbeError("path /fsx does not exist")

    first = run_probe("gpu", {}, unavailable)
    second = run_probe("storage", {"path": "/fsx"}, broken)
    assert (first.verdict, first.reason) == (ProbeVerdict.NOT_AVAILABLE, "no GPU here")
    assert (second.verdict, second.settings) == (ProbeVerdict.FAIL, {"path": "/fsx"})
    assert ProbeResult.from_json(second.to_json()) == second


def test_given_a_forced_failure_when_run_then_it_overrides_a_passing_target() -> None:
    target = Target(metric="busbw_gbps", op=">=", value=1, unit="GB/s")
    outcome = Outcome(values={"busbw_gbps": m(5, "GB/s")}, target=target, forced_fail="wrong sums")
    result = run_probe("nccl", {}, lambda: outcome)
    assert result.verdict == ProbeVerdict.FAIL and result.reason.startswith("wrong sums")


def test_given_a_command_line_target_when_run_then_it_replaces_the_default_and_takes_the_unit() -> None:
    outcome = Outcome(values={"steps_per_hour": m(40, "steps/h")}, target=None)
    result = run_probe("throughput", {}, lambda: outcome, target_override=parse_target("steps_per_hour>=50"))
    assert result.verdict == ProbeVerdict.FAIL
    assert result.target is not None and result.target.unit == "steps/h"


def test_given_samples_when_summarized_then_percentiles_interpolate() -> None:
    summary = summary_percentiles([float(x) for x in range(1, 101)])
    assert summary["mean"] == 50.5 and summary["p50"] == 50.5 and summary["p95"] == pytest.approx(95.05)
    assert summary_percentiles([]) == {}


def test_given_ranks_when_bus_bandwidth_is_computed_then_the_nccl_tests_factor_applies() -> None:
    assert bus_bandwidth(100.0, 2) == 100.0
    assert bus_bandwidth(100.0, 8) == pytest.approx(175.0)
    assert bus_bandwidth(40.96, 16) == pytest.approx(76.8)


def test_given_a_sweep_when_sized_then_it_is_geometric_and_includes_the_verdict_size() -> None:
    sizes = sweep_sizes(NcclSettings(min_bytes=1 << 20, max_bytes=1 << 24, factor=4, verdict_bytes=3 << 20))
    assert sizes == [1 << 20, 3 << 20, 1 << 22, 1 << 24]


def test_given_the_registry_when_a_target_is_resolved_then_it_wins_over_the_default() -> None:
    default = Target(metric="save_s", op="<", value=1, unit="s", source="default")
    target = resolve_target("checkpoint_io", "save_s", default)
    assert target is not None and target.value == 60 and "docs/probes.md" in target.source  # a file users have
    assert resolve_target("throughput", "steps_per_hour", default) is default


def test_given_an_h200_node_without_a_registry_entry_when_defaulted_then_an_intra_node_busbw_target_applies() -> None:
    target = default_nccl_target(None, "NVIDIA H200", nodes=1)
    assert target is not None and target.metric == "busbw_gbps" and target.value < 328
    p4de = default_nccl_target("p4de.24xlarge", None, nodes=2)
    assert p4de is not None and p4de.metric == "algbw_gbps"
    assert default_nccl_target("m5.large", None, nodes=2) is None
