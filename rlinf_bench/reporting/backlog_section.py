"""The report's short "held / superseded checkpoints" section: what the backlog did not start, and why."""

from __future__ import annotations

from html import escape

from pydantic import BaseModel

#: The backlog's states a reader of the report needs to see (started ones are the report itself).
NOT_EVALUATED = ("held", "superseded", "backfilled")


class BacklogRow(BaseModel):
    """One checkpoint the backlog held, superseded or later backfilled (DIR/backlog.json, a store's entry)."""

    uri: str
    experiment: str
    global_step: int
    state: str
    reason: str = ""


def backlog_section_html(rows: list[BacklogRow]) -> str:
    """An HTML section listing held / superseded checkpoints with the reason; '' when there are none."""
    shown = [r for r in rows if r.state in NOT_EVALUATED]
    if not shown:
        return ""
    lines = [
        '<section id="backlog"><h2>Held / superseded checkpoints</h2>',
        "<p>Not evaluated by the intake's backlog policy. On a deployed stack "
        "<code>rlinf-bench backfill ROOT --superseded --backlog-table TABLE</code> evaluates them on request; "
        "in the embedded default <code>rlinf-bench pipeline CHECKPOINT --out DIR</code> evaluates one, "
        "which is then listed as backfilled.</p>",
        "<table><tr><th>experiment</th><th>step</th><th>state</th><th>reason</th></tr>",
    ]
    for r in sorted(shown, key=lambda r: (r.experiment, r.global_step)):
        lines.append(
            f"<tr><td>{escape(r.experiment)}</td><td>{r.global_step}</td>"
            f"<td>{escape(r.state)}</td><td>{escape(r.reason)}</td></tr>"
        )
    lines.append("</table></section>")
    return "\n".join(lines)


def with_backlog_section(html: str, rows: list[BacklogRow]) -> str:
    """``html`` (a report page) with the section placed before ``</body>``."""
    section = backlog_section_html(rows)
    if not section:
        return html
    head, sep, tail = html.rpartition("</body>")
    return f"{head}{section}\n{sep}{tail}" if sep else html + section
