"""One self-contained HTML page (inline CSS, the plot embedded as a data URI) covering every checkpoint."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape

from rlinf_bench.baselines import get_table
from rlinf_bench.contracts import CheckpointReport, SuiteReport
from rlinf_bench.reporting.checklist import ChecklistItem
from rlinf_bench.reporting.format import (
    VERDICT_MARK,
    checkpoint_title,
    interval,
    mean_std,
    pct,
    pvalue,
    verdict_against,
)
from rlinf_bench.reporting.infra import infra_checks

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.6rem} h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem} th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
th{background:#f3f3f3} tr.summary td{font-weight:600;background:#fafafa}
.above{color:#0a7d32}.within{color:#555}.below{color:#b3261e;font-weight:600}.incomplete{color:#a56200}
.pass{color:#0a7d32;font-weight:600}.fail{color:#b3261e;font-weight:600}.notrun{color:#777}
.warn{background:#fff4e5;border-left:4px solid #f0a000;padding:.4rem .8rem}
img.curve{max-width:100%;border:1px solid #ddd} small{color:#666}
"""


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], *, summary_last: bool = False, cls: str = "") -> str:
    out = [
        f'<table class="{cls}"><thead><tr>' + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
    ]
    for i, row in enumerate(rows):
        tr = ' class="summary"' if summary_last and i == len(rows) - 1 else ""
        out.append(f"<tr{tr}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _verdict_span(value: str, text: str) -> str:
    return f'<span class="{escape(value)}">{escape(text)}</span>'


def _history(reports: Sequence[CheckpointReport], suite: str) -> str:
    rows = []
    for r in sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1):
        s = r.suite(suite)
        if s is None:
            continue
        verdicts = "<br>".join(
            _verdict_span(v.value.value, f"{VERDICT_MARK[v.value]} vs {verdict_against(v)}") for v in s.verdicts
        )
        flag = " ⚠ runs disagree" if s.disagreement and s.disagreement.flagged else ""
        rows.append(
            [
                escape(str(r.global_step)),
                escape(mean_std(s)) + escape(flag),
                escape(interval(s.ci95_low, s.ci95_high)),
                escape(interval(s.wilson95_low, s.wilson95_high)),
                escape(f"{s.runs_completed}/{s.runs_expected}"),
                verdicts or "—",
            ]
        )
    head = ["global_step", "SR mean ± std", "clustered 95% CI", "Wilson 95% (pooled)", "runs", "verdicts"]
    return _table(head, rows, cls="history")


def _tasks(suite: SuiteReport) -> str:
    head = ["task", *[f"run {r.run_index} (seed {r.seed})" for r in suite.runs], "mean", "clustered 95% CI"]
    rows = [
        [
            escape(f"{t.task_id}: {t.task_name}"),
            *[pct(x) for x in t.run_success_rates],
            pct(t.success_rate_mean),
            interval(t.ci95_low, t.ci95_high),
        ]
        for t in suite.tasks
    ]
    rows.append(
        [
            escape(f"{suite.suite} ({suite.episodes} episodes)"),
            *[pct(r.success_rate) if r.success_rate is not None else escape(r.status.value) for r in suite.runs],
            escape(mean_std(suite)),
            interval(suite.ci95_low, suite.ci95_high),
        ]
    )
    return _table(head, rows, summary_last=True, cls="tasks")


def _verdicts(report: CheckpointReport) -> str:
    if not report.verdicts:
        return "<p><small>No verdicts: no baseline selected and no earlier checkpoint.</small></p>"
    head = ["suite", "against", "verdict", "SR", "reference", "tolerance", "p (below)", "p (above)", "test"]
    rows = [
        [
            escape(v.suite),
            escape(verdict_against(v)),
            _verdict_span(v.value.value, VERDICT_MARK[v.value]),
            pct(v.estimate),
            pct(v.reference),
            f"{100 * v.tolerance:.1f} pts",
            pvalue(v.p_value),
            pvalue(v.p_value_above),
            escape(v.test or v.reason),
        ]
        for v in report.verdicts
    ]
    return _table(head, rows, cls="verdicts")


def _infra(reports: Sequence[CheckpointReport]) -> str:
    probes = {p.probe: p for r in sorted(reports, key=lambda x: x.global_step or -1) for p in r.probes}
    if not probes:
        return "<p><small>No probe results yet: run the infrastructure probes to fill this section.</small></p>"
    rows = []
    for c in infra_checks(list(probes.values())):
        cls = {"pass": "pass", "fail": "fail"}.get(c.verdict, "notrun")
        target = "—" if c.target is None else f"{c.op} {c.target:g} {c.unit}"
        value = "—" if c.value is None else f"{c.value:g} {c.unit}"
        rows.append(
            [
                escape(c.probe),
                escape(c.metric),
                escape(value),
                escape(target),
                f'<span class="{cls}">{escape(c.verdict)}</span>',
                f"<small>{escape(c.source or c.reason)}</small>",
            ]
        )
    return _table(["probe", "metric", "value", "target", "verdict", "source"], rows, cls="infra")


def _checklist(items: Sequence[ChecklistItem]) -> str:
    rows = [
        [
            escape(i.item),
            f'<span class="{i.status.replace(" ", "")}">{escape(i.status)}</span>',
            f"<small>{escape(i.evidence)}</small>",
        ]
        for i in items
    ]
    return _table(["item", "status", "evidence"], rows, cls="checklist")


def _hardware() -> str:
    t = get_table("hardware/eks-vs-paper")
    rows = [[escape(c) for c in row] for row in t.rows]
    return _table(t.columns, rows) + f"<p><small>{escape(t.note)} Source: {escape(t.source)}</small></p>"


def render_html(
    reports: Sequence[CheckpointReport],
    *,
    plot_png: bytes,
    checklist: Sequence[ChecklistItem],
    title: str,
    generated_at: str,
) -> str:
    """The whole page: history per suite, the curve, the latest checkpoint in detail, infra, checklist."""
    ordered = sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1)
    latest = ordered[-1] if ordered else None
    suites = sorted({s.suite for r in reports for s in r.suites})
    img = base64.b64encode(plot_png).decode("ascii")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1><p><small>{len(reports)} checkpoint(s); generated {escape(generated_at)}. "
        "Clustered 95% CI: initial state as the unit (docs/statistics.md); Wilson: pooled episodes.</small></p>",
        "<h2>Success rate vs global step</h2>",
        f'<img class="curve" id="sr-curve" alt="success rate vs global step" src="data:image/png;base64,{img}">',
    ]
    for suite in suites:
        parts += [f"<h2>{escape(suite)}</h2>", _history(reports, suite)]
    if latest is not None:
        parts.append(
            f"<h2>Latest: {escape(checkpoint_title(latest))}</h2><p><code>{escape(latest.checkpoint_uri)}</code></p>"
        )
        if not latest.complete:
            parts.append('<p class="warn">Incomplete: some runs are missing or failed; verdicts are withheld.</p>')
        for s in latest.suites:
            parts += [f"<h3>{escape(s.suite)}</h3>", _tasks(s)]
        parts += ["<h3>Verdicts</h3>", _verdicts(latest)]
    parts += ["<h2>Infrastructure</h2>", _infra(reports), "<h2>Validation checklist</h2>", _checklist(checklist)]
    parts += ["<h2>Hardware expectations</h2>", _hardware(), "</body></html>"]
    return "\n".join(parts)
