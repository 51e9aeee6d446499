"""bench/render_contention.py: the layouts' render processes and the per-round summary."""

from __future__ import annotations

import pytest

from bench.render_contention import LAYOUTS, RenderPlan, layout_processes, summarize, variant_name


def test_each_layout_groups_the_scenes_into_the_processes_and_contexts_it_names() -> None:
    assert layout_processes("none", 30, 5) == []
    assert layout_processes("procs", 30, 5) == [RenderPlan(1, False)] * 30
    assert layout_processes("procs-pair", 3, 5) == [RenderPlan(1, False, "pair")] * 3
    assert layout_processes("contexts", 30, 5) == [RenderPlan(30, False)]
    assert layout_processes("shared", 30, 5) == [RenderPlan(30, True)]
    assert layout_processes("batched", 30, 5, batch_s=0.1) == [RenderPlan(30, True, "batched", 0.1)]
    groups = layout_processes("groups", 32, 5)
    assert [p.scenes for p in groups] == [7, 7, 6, 6, 6] and all(p.shared for p in groups)
    with pytest.raises(ValueError, match="unknown layout 'gpu'"):
        layout_processes("gpu", 30, 5)
    assert set(LAYOUTS) >= {"none", "procs", "shared"}


def test_the_summary_takes_each_rate_against_the_alone_run_of_its_own_round() -> None:
    def row(layout: str, rate: float, sm: float) -> dict[str, object]:
        return {"layout": layout, "gpu_rate": rate, "gpu": {"mean_sm_active_pct": sm}}

    rows = [row("none", 80.0, 92.0), row("procs", 64.0, 69.0), row("none", 40.0, 90.0), row("procs", 36.0, 70.0)]
    rows[1] |= {"render_ms_median": 97.0, "rows_per_s": 60.0, "identical_to_robosuite": True}
    rows[3] |= {"render_ms_median": 99.0, "rows_per_s": 61.0, "identical_to_robosuite": True}

    summary = summarize(rows, rounds=2)

    assert summary["none"]["gpu_rate_over_alone"] == [1.0, 1.0]
    assert summary["procs"]["gpu_rate_over_alone"] == [0.8, 0.9]  # 64/80 in round 1, 36/40 in round 2
    assert summary["procs"]["sm_active_pct"] == [69.0, 70.0]
    assert summary["procs"]["identical_to_robosuite"] == [True, True]


def test_skipped_mirrors_are_a_variant_of_each_rendering_layout_summarized_beside_it() -> None:
    assert layout_processes("procs", 2, 5, mirrors="skipped") == [RenderPlan(1, False, draw_mirrors=False)] * 2
    assert all(p.draw_mirrors for p in layout_processes("shared", 2, 5))
    with pytest.raises(ValueError, match="unknown mirrors 'off'"):
        layout_processes("procs", 2, 5, mirrors="off")

    def row(layout: str, mirrors: str, rate: float, changed: list[int] | None = None) -> dict[str, object]:
        extra = {} if changed is None else {"pixels_changed": changed}
        return {
            "layout": layout,
            "variant": variant_name(layout, mirrors),
            "mirrors": mirrors,
            "gpu_rate": rate,
        } | extra

    rows = [row("none", "drawn", 80.0), row("procs", "drawn", 64.0), row("procs", "skipped", 72.0, [898, 294])]

    summary = summarize(rows, rounds=1)

    assert list(summary) == ["none", "procs", "procs, mirrors skipped"]
    assert summary["procs, mirrors skipped"]["gpu_rate_over_alone"] == [0.9]
    assert summary["procs, mirrors skipped"]["pixels_changed"] == [[898, 294]]
    assert "pixels_changed" not in summary["procs"]
