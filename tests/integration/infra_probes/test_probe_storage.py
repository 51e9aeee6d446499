"""Storage and checkpoint_io probes on a real disk with real O_DIRECT I/O, and their bad-input results."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra_probes import storage
from infra_probes.probe_cli import build_parser, execute
from rlinf_bench.contracts import ProbeResult, ProbeVerdict
from rlinf_bench.errors import ProbeError


def run(*argv: str) -> ProbeResult:
    return execute(build_parser().parse_args(list(argv)))


def leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.startswith(".rlinf-bench-")]


def test_given_a_disk_directory_when_probed_then_write_and_read_rates_are_measured_and_the_file_removed(
    disk_dir: Path,
) -> None:
    result = run("storage", "--path", str(disk_dir), "--size", "32M", "--block-size", "4M")
    assert result.verdict in (ProbeVerdict.PASS, ProbeVerdict.FAIL)
    assert result.values["write_mb_s"].value > 0 and result.values["read_mb_s"].value > 0
    assert result.values["size_mb"].value == pytest.approx(32 * 2**20 / 1e6)
    assert result.details["o_direct"] is True and result.details["fsync"] is True
    assert result.settings["size_bytes"] == 32 << 20 and result.settings["block_bytes"] == 4 << 20
    assert result.environment.fs_type and result.environment.fs_capacity_bytes
    assert result.target is not None and result.target.metric == "write_mb_s"
    assert leftovers(disk_dir) == []


def test_given_fsx_capacity_and_tier_when_probed_then_the_target_is_their_product(disk_dir: Path) -> None:
    result = run(
        "storage", "--path", str(disk_dir), "--size", "8M", "--block-size", "4M",
        "--fsx-capacity-tib", "4.8", "--fsx-tier", "125",
    )  # fmt: skip
    assert result.target is not None and result.target.value == pytest.approx(600.0)
    assert "4.8" in result.target.source


def test_given_tmpfs_when_probed_then_not_available_because_o_direct_is_meaningless() -> None:
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm on this machine")
    result = run("storage", "--path", "/dev/shm", "--size", "8M", "--block-size", "4M")
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE
    assert "tmpfs" in result.reason and "O_DIRECT" in result.reason
    assert result.details["memory_backed"] is True
    assert leftovers(Path("/dev/shm")) == []


def test_given_a_missing_path_when_probed_then_fail_names_the_path(tmp_path: Path) -> None:
    result = run("storage", "--path", str(tmp_path / "no-such-mount"))
    assert result.verdict == ProbeVerdict.FAIL and "does not exist" in result.reason
    assert "no-such-mount" in result.reason


def test_given_a_file_instead_of_a_directory_when_probed_then_fail(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    result = run("storage", "--path", str(tmp_path / "plain"))
    assert result.verdict == ProbeVerdict.FAIL and "not a directory" in result.reason


def test_given_a_read_only_directory_when_probed_then_fail_says_not_writable(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        (locked / "probe").touch()
    except PermissionError:
        pass  # the normal case: mode bits stop this user
    else:
        (locked / "probe").unlink()
        pytest.skip("running as root: permission bits do not stop writes here")
    result = run("storage", "--path", str(locked), "--size", "8M", "--block-size", "4M")
    assert result.verdict == ProbeVerdict.FAIL and "not writable" in result.reason


def test_given_more_bytes_than_free_space_when_probed_then_fail_before_anything_is_written(disk_dir: Path) -> None:
    result = run("storage", "--path", str(disk_dir), "--size", "1024T")
    assert result.verdict == ProbeVerdict.FAIL
    assert "free" in result.reason and "checked before writing" in result.reason
    assert leftovers(disk_dir) == []


def test_given_misaligned_sizes_when_probed_then_fail_explains_the_alignment(disk_dir: Path) -> None:
    result = run("storage", "--path", str(disk_dir), "--size", "10M", "--block-size", "3000")
    assert result.verdict == ProbeVerdict.FAIL and "multiple of" in result.reason


def test_given_a_read_error_when_probed_then_the_file_is_still_removed(
    disk_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_read(path: Path, size: int, block: int, *, hugepages: bool = False) -> dict[str, object]:
        assert path.exists()  # the written file is there while reading
        raise ProbeError(f"reading {path} failed: injected")

    monkeypatch.setattr(storage, "read_timed", broken_read)
    result = run("storage", "--path", str(disk_dir), "--size", "8M", "--block-size", "4M")
    assert result.verdict == ProbeVerdict.FAIL and "injected" in result.reason
    assert leftovers(disk_dir) == []


def test_given_a_small_state_dict_when_checkpointed_then_save_and_load_are_timed_and_cleaned_up(
    disk_dir: Path,
) -> None:
    result = run("checkpoint_io", "--path", str(disk_dir), "--params", "2e6", "--tensor-params", "5e5")
    assert result.verdict == ProbeVerdict.PASS, result.reason
    assert result.values["size_gb"].value == pytest.approx(4e6 / 1e9, rel=0.05)
    assert result.values["save_s"].value > 0 and result.values["load_gb_s"].value > 0
    assert result.details["tensors"] == 4 and result.details["page_cache_dropped_before_load"] is True
    assert result.target is not None and (result.target.metric, result.target.value) == ("save_s", 60.0)
    assert [c["passed"] for c in result.details["checks"]] == [True]
    assert leftovers(disk_dir) == []


def test_given_a_checkpoint_larger_than_the_disk_when_probed_then_fail_before_writing(disk_dir: Path) -> None:
    result = run("checkpoint_io", "--path", str(disk_dir), "--params", "1e15")
    assert result.verdict == ProbeVerdict.FAIL and "checked before writing" in result.reason
    assert leftovers(disk_dir) == []


def test_given_a_missing_checkpoint_path_when_probed_then_fail(tmp_path: Path) -> None:
    result = run("checkpoint_io", "--path", str(tmp_path / "nope"))
    assert result.verdict == ProbeVerdict.FAIL and "does not exist" in result.reason
