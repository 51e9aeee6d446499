"""Aggregation and reports by horizon group, from constructed RunResults (no simulator involved)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.baselines import get_baseline
from rlinf_bench.contracts import RunStatus
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.reporting.horizon import horizon_markdown
from rlinf_bench.reporting.markdown import checkpoint_markdown
from rlinf_bench.robotwin import suite_tasks
from rlinf_bench.stats import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.groups import horizon_rows
from tests.robotwin.factory import robotwin_run

SFT = get_baseline("robotwin-tasks/simplevla-openvla-oft-sft").values
TRIALS = 1000  # 0.1 % resolution, so the paper's per-task percentages are reproduced exactly


def _paper_sft_run(run_index: int = 0) -> list:
    counts = {task: round(value * TRIALS / 100) for task, value in SFT.items()}
    return [robotwin_run("robotwin", counts, trials=TRIALS, run_index=run_index)]


def test_given_the_papers_per_task_rates_when_grouped_then_each_row_matches_the_briefs_table() -> None:
    rows = {r.key: r for r in horizon_rows(_paper_sft_run())}

    assert list(rows) == ["short", "medium", "long", "extra_long", "long_xl", "overall"]
    # The brief's row for OpenVLA-OFT (SFT): 21.3 / 47.1 / 46.5 / 38.3, each the mean of its tasks.
    for key in ("short", "medium", "long_xl", "overall"):
        assert rows[key].complete
        assert rows[key].delta("robotwin/openvla-oft-sft") == pytest.approx(0.0, abs=0.06), key
    assert rows["short"].mean == pytest.approx((10.1 + 28.1 + 29.7 + 17.1) / 400)
    assert rows["long"].baselines == {}  # the brief publishes long and extra-long merged only
    assert rows["long_xl"].delta("robotwin/rlinf") == pytest.approx(100 * rows["long_xl"].mean - 69.0)


def test_given_three_runs_then_the_row_has_mean_and_sample_std_over_runs() -> None:
    runs = [
        robotwin_run(
            "robotwin_short",
            {"lift_pot": k, "beat_block_hammer": 10, "pick_dual_bottles": 0, "place_phone_stand": 5},
            run_index=i,
        )
        for i, k in enumerate((2, 4, 6))
    ]
    (short,) = [r for r in horizon_rows(runs) if r.key == "short"]

    assert short.run_rates == pytest.approx({0: 0.425, 1: 0.475, 2: 0.525})
    assert short.mean == pytest.approx(0.475)
    assert short.std == pytest.approx(0.05)


def test_given_a_group_split_over_suites_then_it_is_combined_per_run() -> None:
    runs = [
        robotwin_run("robotwin_long", {"handover_block": 3, "stack_bowls_two": 5}),
        robotwin_run("robotwin_extra_long", {"blocks_ranking_rgb": 7, "put_bottles_dustbin": 1}),
    ]
    rows = {r.key: r for r in horizon_rows(runs)}

    assert rows["long_xl"].mean == pytest.approx((0.3 + 0.5 + 0.7 + 0.1) / 4)
    assert "short" not in rows  # no run touched it


def test_given_a_run_missing_a_task_then_the_row_is_partial_and_gets_no_delta() -> None:
    runs = [robotwin_run("robotwin_short", {"lift_pot": 5, "beat_block_hammer": 5, "pick_dual_bottles": 5})]
    (short,) = [r for r in horizon_rows(runs) if r.key == "short"]

    assert not short.complete
    assert short.missing == {0: ("place_phone_stand",)}
    assert short.mean is None and short.delta("robotwin/openvla-oft-sft") is None
    table = horizon_markdown([short])
    assert "incomplete" in table and "run 0 lacks place_phone_stand" in table


def test_given_failed_runs_then_they_count_for_nothing() -> None:
    runs = [robotwin_run("robotwin_long", {"handover_block": 3, "stack_bowls_two": 5}, status=RunStatus.FAILED)]
    assert horizon_rows(runs) == []


def test_given_the_same_task_twice_in_one_run_index_then_aggregation_refuses() -> None:
    runs = [
        robotwin_run("robotwin_short", {"lift_pot": 1}),
        robotwin_run("robotwin/lift_pot", {"lift_pot": 2}),
    ]
    with pytest.raises(
        ResultsMismatchError, match="lift_pot appears in run 0 of both robotwin_short and robotwin/lift_pot"
    ):
        horizon_rows(runs)


def test_given_robotwin_results_when_aggregated_then_the_checkpoint_report_has_the_horizon_table() -> None:
    runs = [SourcedRun(f"run{i}.json", r) for i in range(3) for r in _paper_sft_run(i)]
    report = aggregate_checkpoint(runs)

    text = checkpoint_markdown(report)

    assert "## RoboTwin 2.0 by horizon" in text
    overall = next(line for line in text.splitlines() if line.startswith("| Overall"))
    # Our overall 38.275 vs the SFT table's 38.3 and RLinf's 68.8.
    assert "| 38.3 |" in overall and "| 68.8 | -30.5 |" in overall


def test_given_a_group_suite_then_the_group_baseline_gives_a_suite_verdict_and_a_subset_does_not() -> None:
    from rlinf_bench.contracts import VerdictValue
    from rlinf_bench.stats.aggregate import aggregate_suite
    from rlinf_bench.stats.verdicts import VerdictConfig, baseline_verdicts

    counts = {t: 8 for t in ("lift_pot", "beat_block_hammer", "pick_dual_bottles", "place_phone_stand")}
    full = [robotwin_run("robotwin_short", counts, run_index=i) for i in range(3)]
    (v,) = baseline_verdicts(
        aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(full)], 3),
        [get_baseline("robotwin/openvla-oft-sft")],
        VerdictConfig(),
    )
    assert v.suite == "robotwin_short" and v.reference == pytest.approx(0.213) and v.value == VerdictValue.ABOVE

    del counts["place_phone_stand"]
    part = [robotwin_run("robotwin_short", counts, run_index=i) for i in range(3)]
    (v,) = baseline_verdicts(
        aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(part)], 3),
        [get_baseline("robotwin/openvla-oft-sft")],
        VerdictConfig(),
    )
    # 3 of 4 tasks: no verdict against the group's published number
    assert v.value == VerdictValue.INCOMPLETE and "only 3 of 4 tasks" in v.reason


def test_given_robotwin_result_files_when_compared_then_the_cli_prints_the_horizon_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_cli.main import main

    for suite in ("robotwin_short", "robotwin_medium", "robotwin_long_xl"):
        for i in range(3):
            counts = {t: 5 for t in suite_tasks(suite)}
            (tmp_path / f"{suite}-{i}.json").write_text(robotwin_run(suite, counts, run_index=i).to_json())

    assert main(["compare", *map(str, sorted(tmp_path.glob("*.json"))), "--baseline", "robotwin/rlinf"]) == 0

    out = capsys.readouterr().out
    assert "## RoboTwin 2.0 by horizon" in out
    assert "| Long+XL | 4 | 3 | 50.0 ± 0.0 | 46.5 | +3.5 | 69.0 | -19.0 |" in out
