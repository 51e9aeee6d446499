"""Success rate vs global step, with clustered 95 % intervals and baselines drawn as reference lines; and the
robustness curves: per axis, the success rate under perturbation against its magnitude, with the control."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from rlinf_bench.baselines import Baseline, baselines_for_suite, get_baselines
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.robustness_report import RobustnessLevel

LINESTYLES = ["--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1))]


def plot_baselines(reports: Sequence[CheckpointReport], names: Sequence[str] | None = None) -> list[Baseline]:
    """The baselines to draw: the ones named (or selected in the reports), else every suite-level one
    that has a number for a plotted suite."""
    chosen = list(names or [])
    if not chosen:
        for r in reports:
            chosen += [n for n in r.baselines if n not in chosen]
    if chosen:
        return [b for b in get_baselines(chosen) if b.level == "suite"]
    suites = {s.suite for r in reports for s in r.suites}
    seen: dict[str, Baseline] = {}
    for suite in sorted(suites):
        for b in baselines_for_suite(suite):
            seen.setdefault(b.name, b)
    return list(seen.values())


def _draw_suite(
    ax: Any, suite: str, reports: Sequence[CheckpointReport], baselines: Sequence[Baseline], color: str
) -> None:
    """One suite: mean SR per step with its clustered 95 % interval, x on incomplete checkpoints,
    and a horizontal line per baseline that has a number for the suite."""
    pts = sorted(
        (r.global_step, s)
        for r in reports
        if r.global_step is not None and (s := r.suite(suite)) is not None and s.success_rate_mean is not None
    )
    if pts:
        xs = [p[0] for p in pts]
        ys = [100 * (p[1].success_rate_mean or 0.0) for p in pts]
        lo = [y - 100 * (p[1].ci95_low or 0.0) for y, p in zip(ys, pts, strict=True)]
        hi = [100 * (p[1].ci95_high or 0.0) - y for y, p in zip(ys, pts, strict=True)]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=color, label=f"{suite} (95% CI)")
        bad = [(x, y) for x, y, p in zip(xs, ys, pts, strict=True) if not p[1].complete]
        if bad:
            ax.scatter([x for x, _ in bad], [y for _, y in bad], marker="x", s=80, color="black", zorder=5)
    for j, b in enumerate(x for x in baselines if suite in x.values):
        ax.axhline(b.values[suite], color=color, linestyle=LINESTYLES[j % len(LINESTYLES)], linewidth=1)
        ax.annotate(
            f"{b.name} {b.values[suite]:g}",
            xy=(0.01, b.values[suite]),
            xycoords=("axes fraction", "data"),
            fontsize=7,
            color=color,
            ha="left",
            va="bottom",
        )


def sr_vs_step_png(
    reports: Sequence[CheckpointReport], baselines: Sequence[Baseline], *, title: str = "Success rate vs global step"
) -> bytes:
    """Render the curve as PNG bytes (matplotlib's Agg backend: no display needed).

    One panel per suite when there are several, so each suite's baseline lines stay readable
    (LIBERO's four suites have paper numbers within a few points of each other).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    suites = sorted({s.suite for r in reports for s in r.suites}) or [""]
    ncols = 1 if len(suites) == 1 else 2
    nrows = math.ceil(len(suites) / ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(9 if ncols == 1 else 12, 5 if nrows == 1 else 3.6 * nrows), dpi=110, squeeze=False
    )
    try:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, ax in enumerate(axes.flat):
            if i >= len(suites):
                ax.set_visible(False)
                continue
            if suites[i]:
                _draw_suite(ax, suites[i], reports, baselines, colors[i % len(colors)])
                ax.legend(loc="lower right", fontsize=8)
            ax.set_xlabel("global step")
            ax.set_ylabel("success rate (%)")
            ax.set_ylim(-2, 102)
            ax.grid(alpha=0.3)
        fig.suptitle(title)
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)


def robustness_curves_png(levels: Sequence[RobustnessLevel], *, title: str) -> bytes:
    """One panel per axis: the success rate under perturbation against the level's magnitude (clustered 95 %
    interval), and the control twins' rate on the same pairs at each level (dashed), so a gap is the drop."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes_present = list(dict.fromkeys(r.axis for r in levels))
    ncols = min(3, max(1, len(axes_present)))
    nrows = max(1, math.ceil(len(axes_present) / ncols))
    fig, panels = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.3 * nrows), dpi=110, squeeze=False)
    try:
        for i, ax in enumerate(panels.flat):
            if i >= len(axes_present):
                ax.set_visible(False)
                continue
            rows = sorted((r for r in levels if r.axis == axes_present[i]), key=lambda r: r.magnitude)
            xs = [r.magnitude for r in rows]
            ys = [100 * r.success_rate for r in rows]
            err = [[y - 100 * r.ci95_low for y, r in zip(ys, rows, strict=True)],
                   [100 * r.ci95_high - y for y, r in zip(ys, rows, strict=True)]]  # fmt: skip
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label="perturbed (95% CI)")
            ax.plot(xs, [100 * r.control_success_rate for r in rows], "s--", color="grey", label="control, same pairs")
            ax.set_title(axes_present[i].value, fontsize=10)
            ax.set_xlabel(f"magnitude ({rows[0].unit})")
            ax.set_ylabel("success rate (%)")
            ax.set_ylim(-2, 102)
            ax.set_xlim(0, 1.15 * max(xs) if max(xs) > 0 else 1)  # from 0, the unperturbed episode
            ax.grid(alpha=0.3)
            ax.legend(loc="lower left", fontsize=7)
        fig.suptitle(title)
        buf = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)
