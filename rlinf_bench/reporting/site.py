"""The experiment-wide report: one entry page, the browsable pages under it, and markdown.

``report.html`` is the entry page, the one every command prints and every message links: the whole
report on one self-contained page (inline CSS, the plot embedded), and, when the site's pages are
written, a checkpoint index that drills down to ``checkpoints/...``: per checkpoint (verdicts, what
changed besides the weights, provenance of each run), per suite (tasks, flags) and per task
(initial-state grid, episodes, videos). Without the pages it links nowhere and can be mailed on its own.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rlinf_bench.baselines import Baseline
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.layout import ENTRY_PAGE
from rlinf_bench.document_store import Storage, join
from rlinf_bench.named_files import MediaType
from rlinf_bench.reporting.checklist import ChecklistItem, validation_checklist
from rlinf_bench.reporting.episode_files import EpisodeFiles, StoredRunFiles
from rlinf_bench.reporting.format import checkpoint_title, human
from rlinf_bench.reporting.html import render_html
from rlinf_bench.reporting.infra_rows import check_word, infra_checks
from rlinf_bench.reporting.markdown import (
    changes_section,
    flips_section,
    history_table,
    suite_table,
    task_flags_section,
    verdict_table,
)
from rlinf_bench.reporting.pages import write_pages
from rlinf_bench.reporting.plot import sr_vs_step_png
from rlinf_bench.reporting.robustness_markdown import reasons_markdown, robustness_markdown
from rlinf_bench.reporting.text_safety import markdown as md
from rlinf_bench.reporting.text_safety import markdown_link


@dataclass(frozen=True)
class SiteFiles:
    """What :func:`write_site` wrote: the entry page, its markdown twin, the plot and the pages under it."""

    html: Path
    markdown: Path
    plot: Path
    pages: list[Path] = field(default_factory=list)

    @property
    def all(self) -> list[Path]:
        """Every file written, for uploading the site as it is."""
        return [self.html, self.markdown, self.plot, *self.pages]


_COMPARISONS = frozenset({">", ">=", "<", "<="})


def site_markdown(
    reports: Sequence[CheckpointReport], checklist: Sequence[ChecklistItem], *, title: str, plot_name: str
) -> str:
    """Markdown twin of the HTML page (for PR comments, wikis, MLflow notes)."""
    ordered = sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1)
    suites = sorted({s.suite for r in reports for s in r.suites})
    plot = markdown_link(plot_name, "success rate vs global step")
    parts = [f"# {md(title)}", "", f"{len(reports)} checkpoint(s).", "", f"!{plot}"]
    for suite in suites:
        parts += ["", f"## {md(suite)}", "", history_table(reports, suite)]
    if ordered:
        latest = ordered[-1]
        parts += ["", f"## Latest: {md(checkpoint_title(latest))}"]
        for s in latest.suites:
            parts += ["", f"### {md(s.suite)}", "", suite_table(s)]
        parts += ["", "### Verdicts", "", verdict_table(latest)]
        parts += changes_section(latest) + flips_section(latest) + task_flags_section(latest)
        parts += robustness_markdown(latest) + reasons_markdown(latest)
    probes = {p.probe: p for r in ordered for p in r.probes}
    parts += ["", "## Infrastructure", ""]
    if probes:
        parts += ["| probe | metric | value | target | verdict |", "| --- | --- | --- | --- | --- |"]
        for c in infra_checks(list(probes.values())):
            # A comparison (< before a space opens no tag) is shown as it is; anything else in a stored report
            # is escaped like the unit, which is the probe's.
            op = c.op if c.op in _COMPARISONS else md(c.op)
            target = "—" if c.target is None else f"{op} {md(human(c.target, c.unit))}"
            value = "—" if c.value is None else md(human(c.value, c.unit))
            # The same words as every renderer: "no target", never "not_available"; a run too small for its
            # target says "demo size, not a verdict".
            parts.append(f"| {md(c.probe)} | {md(c.metric)} | {value} | {target} | {check_word(c)} |")
    else:
        parts.append("_No probe results yet._")
    parts += ["", "## Validation checklist", "", "| item | status | evidence |", "| --- | --- | --- |"]
    parts += [f"| {md(i.item)} | {md(i.status)} | {md(i.text)} |" for i in checklist]
    return "\n".join(parts) + "\n"


def write_site(
    reports: Sequence[CheckpointReport],
    out_dir: Path,
    *,
    baselines: Sequence[Baseline],
    title: str,
    mlflow_evidence: str | None = None,
    pages: bool = True,
    files: EpisodeFiles | None = None,
    detail: Sequence[CheckpointReport] | None = None,
) -> SiteFiles:
    """Write the entry page report.html, report.md, sr_vs_step.png and, with ``pages``, the pages it drills
    down to (checkpoints/...) into ``out_dir``. ``files`` reads the recorded videos copied next to the pages
    (default: local files, each from inside its run's folder; a refused one shows "no video" and why).
    ``detail`` limits the checkpoint pages to those reports (the entry page still lists every report)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = sr_vs_step_png(reports, baselines, title=f"{title}: success rate vs global step")
    checklist = validation_checklist(reports, mlflow_evidence=mlflow_evidence)
    plot = out_dir / "sr_vs_step.png"
    plot.write_bytes(png)
    markdown = out_dir / "report.md"
    markdown.write_text(site_markdown(reports, checklist, title=title, plot_name=plot.name), encoding="utf-8")
    links: dict[str, str] = {}
    written: list[Path] = []
    if pages:
        links, written = write_pages(reports, out_dir, files=files or StoredRunFiles(), detail=detail)
    html = out_dir / ENTRY_PAGE
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    html.write_text(
        render_html(
            reports, plot_png=png, checklist=checklist, title=title, generated_at=generated, checkpoint_links=links
        ),
        encoding="utf-8",
    )
    return SiteFiles(html, markdown, plot, written)


_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".png": "image/png",
    **{t.suffix: t.value for t in MediaType},  # the video copies, suffixed by their content
}


def upload_site(
    report: CheckpointReport,
    history: Sequence[CheckpointReport],
    prefix: str,
    storage: Storage,
    *,
    baselines: Sequence[Baseline],
    results_root: str,
) -> str:
    """Write the site of ``report`` (its pages; the entry page over ``history`` + it) and store every file
    under ``prefix``; returns the entry page's URI. Videos are read through ``storage`` (S3 or local), each
    only from inside its run's folder under ``results_root`` (the request's, never the report's own say)."""
    others = [h for h in history if h.checkpoint_uri != report.checkpoint_uri]
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-site-") as tmp:
        root = Path(tmp)
        files = write_site(
            [*others, report],
            root,
            baselines=baselines,
            title=f"rlinf-bench: {report.experiment or 'RLinf'}",
            files=StoredRunFiles(storage, results_root=results_root),
            detail=[report],
        )
        for path in files.all:
            rel = path.relative_to(root).as_posix()
            ctype = _CONTENT_TYPES.get(path.suffix, "application/octet-stream")
            storage.write_bytes(join(prefix, rel), path.read_bytes(), content_type=ctype)
    return join(prefix, ENTRY_PAGE)
