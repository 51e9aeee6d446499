"""The experiment-wide report: one self-contained HTML page plus the same content as markdown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rlinf_bench.baselines import Baseline
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.checklist import ChecklistItem, validation_checklist
from rlinf_bench.reporting.format import checkpoint_title
from rlinf_bench.reporting.html import render_html
from rlinf_bench.reporting.infra import infra_checks
from rlinf_bench.reporting.markdown import history_table, suite_table, verdict_table
from rlinf_bench.reporting.plot import sr_vs_step_png


@dataclass(frozen=True)
class SiteFiles:
    html: Path
    markdown: Path
    plot: Path


def site_markdown(
    reports: Sequence[CheckpointReport], checklist: Sequence[ChecklistItem], *, title: str, plot_name: str
) -> str:
    """Markdown twin of the HTML page (for PR comments, wikis, MLflow notes)."""
    ordered = sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1)
    suites = sorted({s.suite for r in reports for s in r.suites})
    parts = [f"# {title}", "", f"{len(reports)} checkpoint(s).", "", f"![success rate vs global step]({plot_name})"]
    for suite in suites:
        parts += ["", f"## {suite}", "", history_table(reports, suite)]
    if ordered:
        latest = ordered[-1]
        parts += ["", f"## Latest: {checkpoint_title(latest)}"]
        for s in latest.suites:
            parts += ["", f"### {s.suite}", "", suite_table(s)]
        parts += ["", "### Verdicts", "", verdict_table(latest)]
    probes = {p.probe: p for r in ordered for p in r.probes}
    parts += ["", "## Infrastructure", ""]
    if probes:
        parts += ["| probe | metric | value | target | verdict |", "| --- | --- | --- | --- | --- |"]
        for c in infra_checks(list(probes.values())):
            target = "—" if c.target is None else f"{c.op} {c.target:g} {c.unit}"
            value = "—" if c.value is None else f"{c.value:g} {c.unit}"
            parts.append(f"| {c.probe} | {c.metric} | {value} | {target} | {c.verdict} |")
    else:
        parts.append("_No probe results yet._")
    parts += ["", "## Validation checklist", "", "| item | status | evidence |", "| --- | --- | --- |"]
    parts += [f"| {i.item} | {i.status} | {i.evidence.replace('|', '/')} |" for i in checklist]
    return "\n".join(parts) + "\n"


def write_site(
    reports: Sequence[CheckpointReport],
    out_dir: Path,
    *,
    baselines: Sequence[Baseline],
    title: str,
    mlflow_evidence: str | None = None,
) -> SiteFiles:
    """Write report.html (self-contained), report.md and sr_vs_step.png into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = sr_vs_step_png(reports, baselines, title=f"{title}: success rate vs global step")
    checklist = validation_checklist(reports, mlflow_evidence=mlflow_evidence)
    files = SiteFiles(out_dir / "report.html", out_dir / "report.md", out_dir / "sr_vs_step.png")
    files.plot.write_bytes(png)
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    files.html.write_text(
        render_html(reports, plot_png=png, checklist=checklist, title=title, generated_at=generated), encoding="utf-8"
    )
    files.markdown.write_text(
        site_markdown(reports, checklist, title=title, plot_name=files.plot.name), encoding="utf-8"
    )
    return files
