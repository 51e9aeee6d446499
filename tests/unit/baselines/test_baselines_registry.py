"""The baselines registry: names, numbers (as published), sources and lookup errors."""

from __future__ import annotations

import pytest

from rlinf_bench.baselines import (
    baseline_names,
    baselines_for_suite,
    get_baseline,
    get_baselines,
    get_table,
    table_names,
)
from rlinf_bench.errors import UnknownBaselineError

# Figures copied by hand from REFERENCE.md section 2, independently of the YAML files.
PAPER = {
    "libero/openvla-oft-sft": ([91.6, 95.3, 90.6, 86.5], 91.0),
    "libero/openvla-oft-rlinf": ([99.4, 99.1, 99.2, 98.5], 99.1),
    "libero/one-traj-sft": ([63.6, 54.9, 59.6, 17.3], 48.9),
    "libero/one-traj-rl": ([98.2, 98.7, 98.8, 91.7], 96.9),
}
LIBERO4 = ["libero_spatial", "libero_object", "libero_goal", "libero_10"]


@pytest.mark.parametrize("name", sorted(PAPER))
def test_given_a_libero_paper_baseline_when_looked_up_then_it_has_the_published_numbers(name: str) -> None:
    baseline = get_baseline(name)
    values, average = PAPER[name]
    assert [baseline.values[s] for s in LIBERO4] == values
    assert baseline.average == average
    assert baseline.rate("libero_spatial") == pytest.approx(values[0] / 100)
    assert "paper" in baseline.source.lower()


def test_given_libero130_baselines_then_libero_90_is_included() -> None:
    base, grpo = get_baselines(["libero130/openvla-oft-base-lora", "libero130/rlinf-grpo"])
    assert base.values["libero_90"] == 70.97 and base.average == 65.43
    assert grpo.values["libero_90"] == 98.59 and grpo.values["libero_10"] == 93.95 and grpo.average == 98.11


def test_given_robotwin_baselines_then_groups_and_per_task_tables_are_present() -> None:
    assert get_baseline("robotwin/openvla-oft-sft").average == 38.3
    assert get_baseline("robotwin/rlinf").values["robotwin_short"] == 64.9
    per_task = get_baseline("robotwin-tasks/rlinf-grpo")
    assert per_task.level == "task"
    assert per_task.values["beat_block_hammer"] == 96.09 and per_task.average == 86.16
    assert get_baseline("robotwin-tasks/openvla-oft-sft").values["lift_pot"] == 3.13


def test_every_baseline_and_table_cites_a_source() -> None:
    for name in baseline_names():
        assert len(get_baseline(name).source) > 20, name
    for name in table_names():
        assert get_table(name).source


def test_given_the_hardware_table_then_it_matches_the_brief() -> None:
    table = get_table("hardware/eks-vs-paper")
    assert table.columns[0] == "Factor"
    assert ["Inter-node", "InfiniBand", "EFA 400 Gbps", "EFA 3200 Gbps"] in table.rows


def test_given_a_misspelled_name_when_looked_up_then_the_error_suggests_the_right_one() -> None:
    with pytest.raises(UnknownBaselineError) as err:
        get_baseline("libero/openvla-oft-rlnf")
    message = str(err.value)
    assert "Did you mean 'libero/openvla-oft-rlinf'" in message
    assert "libero130/rlinf-grpo" in message  # the full list of names follows


def test_given_a_suite_then_only_baselines_with_a_number_for_it_are_drawn() -> None:
    names = {b.name for b in baselines_for_suite("libero_90")}
    assert names == {
        "libero130/openvla-oft-base-lora",
        "libero130/rlinf-grpo",
        "libero130/openvla-oft-base-example-page",
        "libero130/rlinf-grpo-example-page",
    }


def test_given_the_rlinf_example_page_then_both_rows_are_kept_with_their_caveats() -> None:
    base = get_baseline("libero130/openvla-oft-base-example-page")
    grpo = get_baseline("libero130/rlinf-grpo-example-page")
    assert base.values["libero_spatial"] == 51.61 and base.values["libero_object"] == 50.20
    assert base.average is None  # the page's "130" column is pooled, not a mean of suites
    assert grpo.values["libero_10"] == 93.45 and "temperature 1.6" in grpo.source


def test_no_source_shown_in_a_report_cites_a_file_users_do_not_have() -> None:
    """Reports print each baseline's and each target's source: they cite papers, docs and repositories."""
    import re
    from importlib import resources

    data = resources.files("rlinf_bench.data.baselines")
    for entry in data.iterdir():
        if not entry.name.endswith(".yaml"):
            continue
        # Comments are for maintainers; only values reach a report.
        values = "\n".join(
            line.split(" #")[0] for line in entry.read_text().splitlines() if not line.lstrip().startswith("#")
        )
        for banned in ("REFERENCE.md", "rlinf-benchmarking-skill", "product brief"):
            assert not re.search(re.escape(banned), values, re.IGNORECASE), f"{entry.name} cites {banned}"
