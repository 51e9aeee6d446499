"""Reading nccl-tests' all_reduce_perf output (text table and -J JSON) into the probe's per-size table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra_probes import nccl_tests
from infra_probes.probe_cli import build_parser, execute
from rlinf_bench.contracts import ProbeVerdict
from rlinf_bench.errors import ProbeError

# Written for these tests in all_reduce_perf's column layout (2 ranks; the 1 GiB row is the verdict size).
TEXT = """\
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 1024(factor) warmup iters: 5 iters: 20
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1    15.10   69.44   69.44      0    14.90   70.37   70.37      0
  1073741824     268435456     float     sum      -1   3290.0  326.36  326.36      0   3280.0  327.36  327.36      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 198.38
"""

JSON_REPORT = {
    "version": 2,
    "nccl_version": 22809,
    "results": [
        {
            "size": 1048576,
            "count": 262144,
            "type": "float",
            "redop": "sum",
            "root": "    -1",
            "out_of_place": {"time": 15.1, "alg_bw": 69.44, "bus_bw": 69.44, "nwrong": 0.0},
            "in_place": {"time": 14.9, "alg_bw": 70.37, "bus_bw": 70.37, "nwrong": 0.0},
        },
        {
            "size": 1073741824,
            "count": 268435456,
            "type": "float",
            "redop": "sum",
            "root": "    -1",
            "out_of_place": {"time": 3290.0, "alg_bw": 326.36, "bus_bw": 326.36, "nwrong": 0.0},
            "in_place": {"time": 3280.0, "alg_bw": 327.36, "bus_bw": 327.36, "nwrong": 12.0},
        },
    ],
    "average_bus_bandwidth": {"bandwidth": 198.38, "okay": "unchecked"},
}


def test_given_the_text_table_when_parsed_then_in_place_rows_are_read_and_the_average_line_ignored() -> None:
    rows = nccl_tests.parse_text(TEXT)
    assert [r["bytes"] for r in rows] == [1 << 20, 1 << 30]
    assert rows[1]["busbw_gbps"] == 327.36 and rows[1]["dtype"] == "float32" and rows[1]["wrong"] == 0


def test_given_the_json_report_when_parsed_then_rows_match_and_wrong_counts_are_kept() -> None:
    rows = nccl_tests.parse_json(json.dumps(JSON_REPORT))
    assert rows[1]["busbw_gbps"] == 327.36 and rows[1]["wrong"] == 12


def test_given_output_without_rows_when_parsed_then_the_error_says_so() -> None:
    with pytest.raises(ProbeError, match="no result rows"):
        nccl_tests.parse_text("# nothing ran\n")
    with pytest.raises(ProbeError, match="'results'"):
        nccl_tests.parse_json("{}")


def test_given_a_saved_json_report_with_wrong_sums_when_judged_then_the_probe_fails(tmp_path: Path) -> None:
    report = tmp_path / "allreduce.json"
    report.write_text(json.dumps(JSON_REPORT))
    args = build_parser().parse_args(
        ["nccl", "--nccl-tests-output", str(report), "--instance-type", "p5.48xlarge", "--nodes", "1"]
    )
    result = execute(args)
    assert result.verdict == ProbeVerdict.FAIL and "wrong elements" in result.reason
    assert result.values["busbw_gbps"].value == 327.36
    assert result.values["avg_busbw_gbps"].value == pytest.approx((70.37 + 327.36) / 2)


def test_given_a_saved_text_output_on_a_p5_node_when_judged_then_the_1gib_row_decides(tmp_path: Path) -> None:
    report = tmp_path / "allreduce.txt"
    report.write_text(TEXT)
    args = build_parser().parse_args(
        ["nccl", "--nccl-tests-output", str(report), "--instance-type", "p5.48xlarge", "--nodes", "1"]
    )
    result = execute(args)
    assert result.target is not None and result.target.metric == "busbw_gbps"
    assert result.verdict == ProbeVerdict.FAIL  # 327.36 is just below the registry's intra-node 328 GB/s
    assert result.details["verdict_bytes"] == 1 << 30


def test_given_a_missing_nccl_tests_binary_when_run_then_the_probe_is_not_available() -> None:
    args = build_parser().parse_args(["nccl", "--nccl-tests", "/nonexistent/all_reduce_perf"])
    result = execute(args)
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE and "not found" in result.reason
