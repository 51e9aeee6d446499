"""Plots of ``bench/backlog_sim.py``'s results, as PNG files for docs/scale.md.

Reads the results document (the dict the simulation writes as JSON) and draws:

- ``time_to_verdict_cdf.png``: time to verdict per backlog policy (Kueue, one shard), as a CDF;
- ``evaluated_vs_cost.png``: fraction of checkpoints evaluated against GPU-hours per verdict, every setting;
- ``shard_effect.png``: time to verdict by shard count on the shared cluster, and one checkpoint on an idle one;
- ``training_loss.png``: training's lost GPU-hours with Kueue and without it, per policy.

Regenerate with ``python bench/backlog_sim.py --out bench/results/backlog_sim.json --plots docs/scale``, or from
the committed JSON alone with ``python bench/backlog_plots.py bench/results/backlog_sim.json docs/scale``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

Row = dict[str, Any]
KUEUE = "kueue"
MARKERS = {1: "o", 2: "s", 5: "^"}


def _rows(doc: dict[str, Any], *, admission: str = KUEUE, shards: int | None = None) -> list[Row]:
    return [r for r in doc["rows"] if r["admission"] == admission and (shards is None or r["shards"] == shards)]


def _policy(row: Row) -> str:
    return "no limit" if row["max_running"] == 0 else f"{row['when_free']}, max {row['max_running']}"


def _colors(doc: dict[str, Any]) -> dict[str, Any]:
    names = list(dict.fromkeys(_policy(r) for r in doc["rows"]))
    cmap = plt.get_cmap("tab10")
    return {name: cmap(i) for i, name in enumerate(names)}


def plot_cdf(doc: dict[str, Any]) -> Figure:
    """One CDF of time to verdict per policy (Kueue admission, one shard per suite-run)."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    colors = _colors(doc)
    for row in _rows(doc, shards=1):
        qs = row["to_verdict_quantiles_h"]
        if None in qs:
            continue
        fractions = [i / (len(qs) - 1) for i in range(len(qs))]
        frac = row["summary"]["fraction_evaluated"]
        ax.plot(qs, fractions, color=colors[_policy(row)], label=f"{_policy(row)} ({frac:.0%} evaluated)")
    ax.set_xscale("log")
    ax.set_xlabel("time from save to verdict (hours, log scale)")
    ax.set_ylabel("fraction of verdicts")
    ax.set_title("Time to verdict by backlog policy (Kueue, 1 shard)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def plot_evaluated_vs_cost(doc: dict[str, Any]) -> Figure:
    """Fraction evaluated against GPU-hours per verdict: colour is the policy, marker the shard count."""
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    colors = _colors(doc)
    sizes = {name: 220 - 40 * i for i, name in enumerate(colors)}  # concentric where two settings coincide
    for row in _rows(doc):
        s = row["summary"]
        ax.scatter(
            s["gpu_h_per_verdict"],
            s["fraction_evaluated"],
            color=colors[_policy(row)],
            marker=MARKERS.get(row["shards"], "x"),
            s=sizes[_policy(row)],
            edgecolors="black",
            linewidths=0.5,
        )
    handles = [Line2D([], [], color=c, marker="o", linestyle="", label=name) for name, c in colors.items()]
    handles += [
        Line2D([], [], color="grey", marker=m, linestyle="", label=f"{k} shard{'s' if k > 1 else ''}")
        for k, m in MARKERS.items()
    ]
    ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    ax.set_xlabel("GPU-hours per verdict (preempted work included)")
    ax.set_ylabel("fraction of checkpoints evaluated")
    ax.set_ylim(0, 1.05)
    ax.set_title("What a verdict costs, and how many checkpoints get one (Kueue)")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def plot_shards(doc: dict[str, Any]) -> Figure:
    """Left: p50/p95 time to verdict per policy and shard count (shared). Right: one checkpoint, idle cluster."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8), gridspec_kw={"width_ratios": [2, 1]})
    policies = list(dict.fromkeys(_policy(r) for r in _rows(doc)))
    width = 0.8 / len(MARKERS)
    for j, shards in enumerate(MARKERS):
        by = {_policy(r): r["summary"] for r in _rows(doc, shards=shards)}
        xs = [i + (j - 1) * width for i in range(len(policies))]
        p50 = [by[p]["to_verdict_p50_h"] for p in policies]
        p95 = [by[p]["to_verdict_p95_h"] for p in policies]
        left.bar(xs, p95, width, color=f"C{j}", alpha=0.35)
        left.bar(
            xs, p50, width, color=f"C{j}", label=f"{shards} shard{'s' if shards > 1 else ''} (p50 dark, p95 light)"
        )
    left.set_xticks(range(len(policies)), policies, rotation=20, ha="right", fontsize=8)
    left.set_yscale("log")
    left.yaxis.set_major_locator(FixedLocator([1, 2, 3, 5, 10, 20, 30, 50, 100]))
    left.yaxis.set_major_formatter(ScalarFormatter())
    left.yaxis.set_minor_locator(NullLocator())
    left.set_ylabel("time to verdict (hours, log scale)")
    left.set_title("Shared cluster (Kueue)")
    left.legend(fontsize=8, loc="upper right")
    idle = doc["idle_cluster"]
    right.bar([str(r["shards"]) for r in idle], [r["verdict_s"] / 60 for r in idle], color="C2")
    for i, r in enumerate(idle):
        right.annotate(f"{r['gpu_s'] / 3600:.2f} GPU-h", (i, r["verdict_s"] / 60), ha="center", va="bottom", fontsize=8)
    right.set_xlabel("shards per suite-run")
    right.set_ylabel("verdict after (minutes)")
    right.set_title(f"One checkpoint, {doc['scenario']['cluster']['gpus']} idle GPUs")
    right.margins(y=0.15)
    fig.tight_layout()
    return fig


def plot_training_loss(doc: dict[str, Any]) -> Figure:
    """Training's GPU-hours lost waiting for GPUs, with Kueue and without (first-come first-served), per policy."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    kueue = {_policy(r): r["summary"] for r in _rows(doc, shards=1)}
    fifo = {_policy(r): r["summary"] for r in _rows(doc, admission="fifo (no Kueue)", shards=1)}
    policies = list(kueue)
    xs = range(len(policies))
    ax.bar([x - 0.2 for x in xs], [fifo[p]["training_lost_gpu_h"] for p in policies], 0.4, label="no Kueue (FIFO)")
    ax.bar([x + 0.2 for x in xs], [kueue[p]["training_lost_gpu_h"] for p in policies], 0.4, label="Kueue")
    for x, p in zip(xs, policies, strict=True):
        for dx, by in ((-0.2, fifo), (0.2, kueue)):
            lost = by[p]["training_lost_gpu_h"]
            ax.annotate(f"{lost:.2f}", (x + dx, lost), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(xs), policies, rotation=15, ha="right", fontsize=8)
    ax.set_ylabel("training GPU-hours lost (mean per replication)")
    ax.set_title("Training's loss: waiting for GPUs evaluation holds (1 shard)")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


PLOTS = {
    "time_to_verdict_cdf.png": plot_cdf,
    "evaluated_vs_cost.png": plot_evaluated_vs_cost,
    "shard_effect.png": plot_shards,
    "training_loss.png": plot_training_loss,
}


def write_plots(doc: dict[str, Any], folder: Path) -> list[Path]:
    """Draw every plot of ``doc`` into ``folder``; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in PLOTS.items():
        fig = draw(doc)
        path = folder / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


if __name__ == "__main__":
    import argparse

    # `make bench` runs every bench/*.py without arguments: redraw the committed plots from the committed JSON
    ROOT = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="?", type=Path, default=ROOT / "bench/results/backlog_sim.json")
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs/scale", help="folder of the PNG files")
    args = parser.parse_args()
    for written_path in write_plots(json.loads(args.results.read_text()), args.out):
        print(f"wrote {written_path}")
