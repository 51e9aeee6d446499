"""watch mirrors a burst of checkpoints in the order they were written, so the backlog's "first" is the oldest."""

from __future__ import annotations

import os
from pathlib import Path

from rlinf_local.watch import in_arrival_order


def _write(path: Path, mtime_ns: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def test_a_burst_is_mirrored_oldest_first_not_in_path_order(tmp_path: Path) -> None:
    steps = [25, 50, 100, 250]
    files = [_write(tmp_path / f"exp/checkpoints/global_step_{s}/actor/w.pt", 10**9 * i) for i, s in enumerate(steps)]

    ordered = [p for p, _ in in_arrival_order(sorted(files))]  # path order puts step 100 first

    assert ordered == files


def test_files_of_one_moment_are_ordered_by_step_as_a_number(tmp_path: Path) -> None:
    files = [_write(tmp_path / f"exp/checkpoints/global_step_{s}/actor/w.pt", 10**9) for s in (25, 100, 250)]

    assert [p for p, _ in in_arrival_order(reversed(files))] == files


def test_a_file_renamed_away_while_listing_is_skipped(tmp_path: Path) -> None:
    kept = _write(tmp_path / "a.pt", 10**9)

    assert [p for p, _ in in_arrival_order([tmp_path / "gone.tmp", kept])] == [kept]


def test_folders_among_the_paths_are_left_out(tmp_path: Path) -> None:
    kept = _write(tmp_path / "exp/checkpoints/global_step_25/actor/w.pt", 10**9)

    assert [p for p, _ in in_arrival_order(tmp_path.rglob("*"))] == [kept]
