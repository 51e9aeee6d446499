"""In the embedded default a superseded checkpoint evaluated later with ``pipeline`` is listed as backfilled."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.reporting.backlog_section import BacklogRow
from rlinf_local.backlog_status import format_backlog, mark_evaluated, read_backlog, save_backlog

URI = "s3://rlinf-checkpoints/exp/checkpoints/global_step_{}"


def _row(step: int, state: str = "superseded") -> BacklogRow:
    return BacklogRow(
        uri=URI.format(step), experiment="exp", global_step=step, state=state, reason="superseded by step 250"
    )


def test_a_superseded_checkpoint_with_a_report_becomes_backfilled_and_the_others_stay(tmp_path: Path) -> None:
    save_backlog(tmp_path, [_row(50), _row(100)])

    marked = mark_evaluated(read_backlog(tmp_path), {URI.format(100)})
    save_backlog(tmp_path, marked)
    listing = format_backlog(read_backlog(tmp_path))

    assert "exp step      50  superseded  superseded by step 250" in listing
    assert "exp step     100  backfilled  evaluated later (was superseded: superseded by step 250)" in listing
    assert "pipeline ROOT/<experiment>/checkpoints/global_step_<N> --out DIR" in listing


def test_a_started_checkpoint_is_left_as_it_is() -> None:
    rows = [_row(25, state="started")]

    assert mark_evaluated(rows, {URI.format(25)}) == rows
