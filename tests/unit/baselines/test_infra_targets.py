"""Infrastructure targets: thresholds from the brief with REFERENCE.md's corrections."""

from __future__ import annotations

import pytest

from rlinf_bench.baselines import infra_target, nccl_instance_types
from rlinf_bench.errors import ConfigError, UnknownBaselineError


def test_given_gpu_probe_then_util_and_memory_targets_follow_the_brief() -> None:
    util = infra_target("gpu", "util_update_pct")
    mem = infra_target("gpu", "memory_used_pct")
    assert util is not None and (util.op, util.value, util.unit) == (">", 70.0, "%")
    assert mem is not None and (mem.op, mem.value) == (">", 80.0)
    assert "docs/probes.md" in util.source  # a page users have, not the brief or REFERENCE.md


def test_given_p4de_then_the_nccl_target_is_busbw_not_the_briefs_algbw() -> None:
    target = infra_target("nccl", "busbw_gbps", instance_type="p4de.24xlarge")
    assert target is not None
    # 40 GB/s algbw (the brief's lower bound) x 2(n-1)/n with n = 16 ranks
    assert target.value == pytest.approx(40 * 2 * 15 / 16)
    assert target.value > 50  # the brief's 40-50 would pass a link running at half speed
    assert "76.79" in target.source and "algbw" in target.source


def test_given_p5_then_inter_and_intra_node_targets_differ() -> None:
    inter = infra_target("nccl", "busbw_gbps", instance_type="p5.48xlarge")
    intra = infra_target("nccl", "busbw_gbps", instance_type="p5.48xlarge", nodes=1)
    assert inter is not None and inter.value == 300.0 and "437" in inter.source
    assert intra is not None and intra.value == pytest.approx(0.9 * 365, abs=0.6) and "365" in intra.source
    assert "p5.48xlarge" in nccl_instance_types()


def test_given_an_unknown_instance_type_then_there_is_no_nccl_target() -> None:
    assert infra_target("nccl", "busbw_gbps", instance_type="g5.xlarge") is None
    assert infra_target("nccl", "busbw_gbps") is None


def test_given_storage_without_fs_details_then_the_target_is_500_mb_s() -> None:
    for metric in ("write_mb_s", "read_mb_s"):
        target = infra_target("storage", metric)
        assert target is not None and (target.op, target.value, target.unit) == (">", 500.0, "MB/s")


def test_given_fs_capacity_and_tier_then_the_storage_target_is_their_product() -> None:
    target = infra_target("storage", "read_mb_s", fs_capacity_tib=2.4, fs_tier_mb_s_per_tib=125)
    assert target is not None and target.value == pytest.approx(300.0)
    assert "2.4 TiB x 125" in target.source


def test_given_only_capacity_then_the_error_asks_for_the_tier() -> None:
    with pytest.raises(ConfigError, match="fs_tier_mb_s_per_tib"):
        infra_target("storage", "write_mb_s", fs_capacity_tib=4.8)


def test_given_checkpoint_io_then_save_and_load_must_take_under_a_minute() -> None:
    save = infra_target("checkpoint_io", "save_s")
    load = infra_target("checkpoint_io", "load_s")
    assert save is not None and (save.op, save.value, save.unit) == ("<", 60.0, "s")
    assert load is not None and load.value == 60.0


def test_given_a_metric_without_target_then_none() -> None:
    assert infra_target("throughput", "steps_per_hour") is None
    assert infra_target("gpu", "power_w") is None


def test_given_a_misspelled_probe_then_the_error_suggests_the_right_one() -> None:
    with pytest.raises(UnknownBaselineError, match="Did you mean 'storage'"):
        infra_target("storag", "write_mb_s")
