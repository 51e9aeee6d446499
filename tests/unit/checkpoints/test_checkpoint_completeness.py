"""Completeness: required files, sizes, shard gaps and the quiet period, on S3-like listings and local dirs."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rlinf_bench.checkpoints.completeness import check_completeness
from rlinf_bench.checkpoints.listing import CheckpointLister, StoredObject
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from tests.synthetic_checkpoints import fsdp_objects

T0 = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)


class ListingOf:
    """An in-memory lister: the objects FSx has exported so far, with their times."""

    def __init__(self, objects: list[tuple[str, int]], at: datetime = T0) -> None:
        self.objects = [StoredObject(rel, size, at) for rel, size in objects]

    def list(self, root_uri: str) -> list[StoredObject]:
        return list(self.objects)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_given_a_full_fsdp_export_after_the_quiet_period_then_it_is_complete() -> None:
    verdict = check_completeness("s3://b/r", ListingOf(fsdp_objects(64)), quiet_period_s=60, clock=lambda: at(61))

    assert verdict.complete and verdict.layout is CheckpointLayout.FSDP_DCP
    assert verdict.files == 66  # markers are not files
    assert verdict.reason.startswith("complete (fsdp_dcp, 66 files")


def test_given_a_fresh_export_then_it_waits_for_quiet_and_says_how_long() -> None:
    verdict = check_completeness("s3://b/r", ListingOf(fsdp_objects(8)), quiet_period_s=60, clock=lambda: at(20))

    assert verdict.files_ok and not verdict.complete
    assert verdict.quiet_remaining_s == pytest.approx(40)
    assert "waiting 40s more for quiet" in verdict.reason


def test_given_a_temp_file_still_changing_then_the_quiet_period_restarts_from_it() -> None:
    lister = ListingOf(fsdp_objects(8))
    lister.objects.append(StoredObject("actor/model_state_dict/full_weights.pt.tmp", 5, at(50)))

    verdict = check_completeness("s3://b/r", lister, quiet_period_s=60, clock=lambda: at(70))

    assert verdict.files == 10 and not verdict.complete and verdict.quiet_remaining_s == pytest.approx(40)


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        ("actor/dcp_checkpoint/.metadata", "missing actor/dcp_checkpoint/.metadata"),
        ("actor/model_state_dict/full_weights.pt", "missing actor/model_state_dict/full_weights.pt"),
        ("actor/dcp_checkpoint/__3_0.distcp", "DCP shard ranks missing 3"),
    ],
)
def test_given_a_missing_file_then_it_is_incomplete_naming_it(drop: str, expected: str) -> None:
    objects = [o for o in fsdp_objects(8) if o[0] != drop]

    verdict = check_completeness("s3://b/r", ListingOf(objects), quiet_period_s=0, clock=lambda: at(999))

    assert not verdict.complete and expected in verdict.reason


def test_given_a_zero_byte_weights_file_then_it_is_incomplete() -> None:
    objects = [(rel, 0 if rel.endswith(".pt") else size) for rel, size in fsdp_objects(4)]
    verdict = check_completeness("s3://b/r", ListingOf(objects), quiet_period_s=0, clock=lambda: at(1))
    assert not verdict.complete and "empty actor/model_state_dict/full_weights.pt" in verdict.reason


def test_given_nothing_but_markers_then_no_layout_is_found() -> None:
    verdict = check_completeness("s3://b/r", ListingOf([("actor/", 0)]), quiet_period_s=0, clock=lambda: at(1))
    assert verdict.layout is None and not verdict.complete and "no RLinf checkpoint files" in verdict.reason


@pytest.mark.parametrize(
    ("objects", "layout"),
    [
        (
            [("actor/.metadata", 5), ("actor/__0_0.distcp", 5), ("actor/model/model.safetensors", 5)],
            CheckpointLayout.V01,
        ),
        ([("actor/model.pt", 5)], CheckpointLayout.LEGACY_PT),
        (
            [("actor/latest_checkpointed_iteration.txt", 2), ("actor/iter_0000100/mp_rank_00/model_optim_rng.pt", 9)],
            CheckpointLayout.MEGATRON,
        ),
    ],
)
def test_given_older_layouts_then_each_is_detected_and_judged_complete(
    objects: list[tuple[str, int]], layout: CheckpointLayout
) -> None:
    verdict = check_completeness("s3://b/r", ListingOf(objects), quiet_period_s=0, clock=lambda: at(1))
    assert verdict.layout is layout and verdict.complete


def test_given_a_megatron_tracker_without_iteration_files_then_it_is_incomplete() -> None:
    objects = [("actor/latest_checkpointed_iteration.txt", 2), ("actor/iter_0000100/", 0)]
    verdict = check_completeness("s3://b/r", ListingOf(objects), quiet_period_s=0, clock=lambda: at(1))
    assert not verdict.complete and "missing actor/iter_*/mp_rank_*/*" in verdict.reason


def test_given_a_local_checkpoint_directory_then_it_is_listed_and_judged_like_s3(tmp_path: Path) -> None:
    for rel, size in fsdp_objects(4, markers=False):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
        os.utime(path, (T0.timestamp(), T0.timestamp()))

    verdict = check_completeness(str(tmp_path), CheckpointLister(), quiet_period_s=60, clock=lambda: at(61))

    assert verdict.complete and verdict.files == 6
    assert CheckpointLister().list(str(tmp_path / "missing")) == []
