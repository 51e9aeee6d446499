"""The Jinja2 environment of the HTML reports: package templates, autoescape on, shared helpers.

Autoescape is on for every template: task names, errors, commands and provenance come from files
anyone can write, and a ``<`` in them must print as text, never become markup.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from rlinf_bench.reporting import format as fmt
from rlinf_bench.reporting.canary import canary_lines
from rlinf_bench.reporting.infra_rows import check_word
from rlinf_bench.reporting.robustness_text import signed_pts
from rlinf_bench.stats.flips import flip_summary, flip_table

__all__ = ["environment", "render"]


@lru_cache(maxsize=1)
def environment() -> Environment:
    """One environment per process (templates are compiled once)."""
    env = Environment(
        loader=PackageLoader("rlinf_bench.reporting", "templates"),
        autoescape=True,
        undefined=StrictUndefined,  # a typo in a template fails the render instead of printing nothing
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        mark=fmt.VERDICT_MARK,
        pct=fmt.pct,
        human=fmt.human,
        interval=fmt.interval,
        mean_std=fmt.mean_std,
        pvalue=fmt.pvalue,
        against=fmt.verdict_against,
        note=fmt.verdict_note,
        mde=fmt.mde_text,
        ctitle=fmt.checkpoint_title,
        flip_lines=flip_summary,
        flip_rows=flip_table,
        canary_lines=canary_lines,
        check_word=check_word,
        pts=signed_pts,
    )
    return env


def render(template: str, **context: Any) -> str:
    """Render ``template`` (a file in rlinf_bench/reporting/templates) with ``context``."""
    return environment().get_template(template).render(**context)
