"""One self-contained HTML page (inline CSS, the plot embedded as a data URI) covering every checkpoint.

Rendered from the Jinja2 template ``templates/index.html.j2`` with autoescape: every table cell is
HTML-escaped. The same page is the browsable site's entry page (:mod:`rlinf_bench.reporting.site`), then
with links to one page per checkpoint (:mod:`rlinf_bench.reporting.pages`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

from rlinf_bench.baselines import get_table
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.checklist import ChecklistItem
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.reporting.infra_strip import infra_strip
from rlinf_bench.reporting.templating import render

__all__ = ["render_html"]


def _step(r: CheckpointReport) -> int:
    return r.global_step if r.global_step is not None else -1


def render_html(
    reports: Sequence[CheckpointReport],
    *,
    plot_png: bytes,
    checklist: Sequence[ChecklistItem],
    title: str,
    generated_at: str,
    checkpoint_links: Mapping[str, str] | None = None,
) -> str:
    """The whole page: history per suite, the curve, the latest checkpoint in detail, infra, checklist.

    ``checkpoint_links`` (checkpoint URI -> relative URL) adds the checkpoint index of the site; without
    it the page links nowhere and can be mailed or opened offline on its own.
    """
    ordered = sorted(reports, key=_step)
    probes = {p.probe: p for r in ordered for p in r.probes}
    infra = infra_checks(list(probes.values())) if probes else []
    return render(
        "index.html.j2",
        title=title,
        crumbs=[],
        reports=reports,
        ordered=ordered,
        latest=ordered[-1] if ordered else None,
        suites=sorted({s.suite for r in reports for s in r.suites}),
        plot_b64=base64.b64encode(plot_png).decode("ascii"),
        generated_at=generated_at,
        checkpoint_links=dict(checkpoint_links or {}),
        infra=infra,
        infra_strip=infra_strip(infra),
        checklist=checklist,
        hardware=get_table("hardware/eks-vs-paper"),
    )
