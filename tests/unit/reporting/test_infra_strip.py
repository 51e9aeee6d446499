"""The infrastructure section reads at a glance: a chip per probe, the failing values named, details folded."""

from __future__ import annotations

from rlinf_bench.contracts import InfraCheck
from rlinf_bench.reporting.infra_strip import infra_strip


def _check(probe: str, metric: str, value: float | None, verdict: str, **kw: object) -> InfraCheck:
    return InfraCheck(probe=probe, metric=metric, value=value, verdict=verdict, **kw)  # type: ignore[arg-type]


CHECKS = [
    _check("storage", "write_mb_s", 344.2, "fail", unit="MB/s", op=">", target=500.0),
    _check("storage", "read_mb_s", 532.0, "not_available", unit="MB/s"),
    _check("checkpoint_io", "save_s", 0.0166, "pass", unit="s", op="<", target=60.0),
    _check("checkpoint_io", "load_s", 0.0064, "pass", unit="s", op="<", target=60.0),
    _check("gpu", "—", None, "not_available", reason="no NVIDIA GPU or driver here"),
    _check("nccl", "busbw_gbps", 0.98, "not_available", unit="GB/s"),
]


def test_each_probe_gets_one_chip_saying_what_failed_and_against_what() -> None:
    chips = {c.probe: c for c in infra_strip(CHECKS)}

    assert list(chips) == ["storage", "checkpoint_io", "gpu", "nccl"]
    assert chips["storage"].state == "fail"
    assert chips["storage"].text == "✗ write_mb_s 344 MB/s (target > 500 MB/s)"
    assert (chips["checkpoint_io"].state, chips["checkpoint_io"].text) == ("pass", "✓ 2 targets met")
    assert (chips["gpu"].state, chips["gpu"].title) == ("notrun", "no NVIDIA GPU or driver here")
    assert chips["nccl"].state == "measured"


def test_figures_the_probe_says_are_not_the_thing_are_not_decided_never_no_target() -> None:
    memory = _check(
        "storage", "write_mb_s", 5200.0, "not_available", unit="MB/s", op=">", target=500.0,
        reason="/dev/shm is on tmpfs: memory-backed, these figures are memory bandwidth",
    )  # fmt: skip
    (chip,) = infra_strip([memory])

    assert (chip.state, chip.text) == ("notdecided", "not decided") and "memory-backed" in chip.title
