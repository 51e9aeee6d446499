"""The experiment-wide report: a browsable static site, one self-contained HTML page, and markdown.

``report.html`` is the single page (mail it, open it offline); ``index.html`` is the same page with a
checkpoint index linking to ``checkpoints/...``: per checkpoint (verdicts, what changed besides the
weights, provenance of each run), per suite (tasks, flags) and per task (initial-state grid, episodes).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rlinf_bench.baselines import Baseline
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.document_store import Storage, join
from rlinf_bench.reporting.checklist import ChecklistItem, validation_checklist
from rlinf_bench.reporting.format import checkpoint_title, human
from rlinf_bench.reporting.html import render_html
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.reporting.markdown import (
    changes_section,
    flips_section,
    history_table,
    suite_table,
    task_flags_section,
    verdict_table,
)
from rlinf_bench.reporting.pages import VideoReader, write_pages
from rlinf_bench.reporting.plot import sr_vs_step_png
from rlinf_bench.reporting.text_safety import markdown as md
from rlinf_bench.reporting.text_safety import markdown_link


@dataclass(frozen=True)
class SiteFiles:
    """What :func:`write_site` wrote: the single page, its markdown twin, the plot and the site pages."""

    html: Path
    markdown: Path
    plot: Path
    index: Path | None = None
    pages: list[Path] = field(default_factory=list)

    @property
    def all(self) -> list[Path]:
        """Every file written, for uploading the site as it is."""
        return [self.html, self.markdown, self.plot, *([self.index] if self.index else []), *self.pages]


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
            # A measured value without a target was not judged: "no target", never "not_available".
            word = "no target" if c.verdict == "not_available" and c.value is not None else c.verdict
            parts.append(f"| {md(c.probe)} | {md(c.metric)} | {value} | {target} | {word} |")
    else:
        parts.append("_No probe results yet._")
    parts += ["", "## Validation checklist", "", "| item | status | evidence |", "| --- | --- | --- |"]
    parts += [f"| {md(i.item)} | {md(i.status)} | {md(i.evidence)} |" for i in checklist]
    return "\n".join(parts) + "\n"


def local_video(uri: str) -> bytes | None:
    """The default video reader: local files only (an ``s3://`` video needs the publisher's storage), and only
    videos: a result's ``video`` field must not copy any file it names into the site."""
    if "://" in uri and not uri.startswith("file://"):
        return None
    if Path(uri).suffix.lower() not in (".mp4", ".gif"):
        return None
    path = Path(uri.removeprefix("file://"))
    return path.read_bytes() if path.is_file() else None


def write_site(
    reports: Sequence[CheckpointReport],
    out_dir: Path,
    *,
    baselines: Sequence[Baseline],
    title: str,
    mlflow_evidence: str | None = None,
    pages: bool = True,
    read_video: VideoReader | None = local_video,
    detail: Sequence[CheckpointReport] | None = None,
) -> SiteFiles:
    """Write report.html (self-contained), report.md, sr_vs_step.png and, with ``pages``, the browsable
    site (index.html + checkpoints/...) into ``out_dir``. ``read_video`` fetches recorded videos to copy
    next to the pages (None: every episode shows "no video"). ``detail`` limits the checkpoint pages to
    those reports (the index still covers every report)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = sr_vs_step_png(reports, baselines, title=f"{title}: success rate vs global step")
    checklist = validation_checklist(reports, mlflow_evidence=mlflow_evidence)
    plot = out_dir / "sr_vs_step.png"
    plot.write_bytes(png)
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    html = out_dir / "report.html"
    html.write_text(
        render_html(reports, plot_png=png, checklist=checklist, title=title, generated_at=generated), encoding="utf-8"
    )
    markdown = out_dir / "report.md"
    markdown.write_text(site_markdown(reports, checklist, title=title, plot_name=plot.name), encoding="utf-8")
    if not pages:
        return SiteFiles(html, markdown, plot)
    links, written = write_pages(reports, out_dir, read_video=read_video, detail=detail)
    index = out_dir / "index.html"
    index.write_text(
        render_html(
            reports, plot_png=png, checklist=checklist, title=title, generated_at=generated, checkpoint_links=links
        ),
        encoding="utf-8",
    )
    return SiteFiles(html, markdown, plot, index, written)


_CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".md": "text/markdown; charset=utf-8", ".png": "image/png"}


def upload_site(
    report: CheckpointReport,
    history: Sequence[CheckpointReport],
    prefix: str,
    storage: Storage,
    *,
    baselines: Sequence[Baseline],
) -> str:
    """Write the site of ``report`` (its pages; the index over ``history`` + it) and store every file under
    ``prefix``; returns the index's URI. Videos are read through ``storage`` (S3 or local)."""
    others = [h for h in history if h.checkpoint_uri != report.checkpoint_uri]
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-site-") as tmp:
        root = Path(tmp)
        files = write_site(
            [*others, report],
            root,
            baselines=baselines,
            title=f"rlinf-bench: {report.experiment or 'RLinf'}",
            read_video=storage.read_bytes,
            detail=[report],
        )
        for path in files.all:
            rel = path.relative_to(root).as_posix()
            ctype = _CONTENT_TYPES.get(
                path.suffix, "video/mp4" if path.suffix == ".mp4" else "application/octet-stream"
            )
            storage.write_bytes(join(prefix, rel), path.read_bytes(), content_type=ctype)
    return join(prefix, "index.html")
