"""The guides stay guides: every ``page.md#anchor`` link lands on a heading, docs/performance.md stays short,
and no page speaks of issue numbers (the dated history lives in bench/LOG.md and the results files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
PERFORMANCE_MAX_LINES = 250

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, spaces and hyphens
    stay, inline code's backticks go), each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors on its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor on ``page``, outside fenced code; a repeated heading gets -1, -2, ... as on GitHub."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    in_fence = False
    for line in page.read_text().splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            base = slug(match.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_anchor_links(page: Path) -> list[str]:
    """``target.md#anchor`` and ``#anchor`` links of ``page`` whose anchor is no heading of their target."""
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or "#" not in target:
            continue
        path, _, anchor = target.partition("#")
        linked = page if not path else (page.parent / path).resolve()
        if linked.suffix != ".md":
            continue
        if not linked.is_file():
            broken.append(f"{target} (no such page)")
        elif anchor not in anchors(linked):
            broken.append(target)
    return broken


def test_slug_follows_githubs_rules() -> None:
    assert slug("Interval coverage (`bench/interval_coverage.py`)") == "interval-coverage-benchinterval_coveragepy"
    assert slug("Adaptive budget (`--adaptive`)") == "adaptive-budget---adaptive"
    assert slug("Where the GPU's time goes: the renders") == "where-the-gpus-time-goes-the-renders"


def test_given_a_link_to_a_missing_heading_then_it_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Kept section\n\n```bash\n# not a heading\n```\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Local\n\nSee [kept](other.md#kept-section), [gone](other.md#gone-section),\n"
        "[here](#local), [code comment](other.md#not-a-heading) and [missing](nowhere.md#x).\n"
    )
    assert broken_anchor_links(page) == [
        "other.md#gone-section",
        "other.md#not-a-heading",
        "nowhere.md#x (no such page)",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_anchor_link_points_to_a_heading(page: Path) -> None:
    assert broken_anchor_links(page) == []


def test_the_performance_page_is_a_short_guide() -> None:
    lines = len((REPO / "docs" / "performance.md").read_text().splitlines())
    assert lines <= PERFORMANCE_MAX_LINES, (
        f"docs/performance.md has {lines} lines (at most {PERFORMANCE_MAX_LINES}): state today's figure and its "
        "command there, and move the dated history to bench/LOG.md"
    )


DOC_TEXTS = sorted(p for p in (REPO / "docs").rglob("*") if p.suffix in {".md", ".json", ".yaml", ".txt"})


@pytest.mark.parametrize("page", DOC_TEXTS, ids=lambda p: str(p.relative_to(REPO / "docs")))
def test_docs_speak_of_the_product_not_of_issues(page: Path) -> None:
    mentions = [line for line in page.read_text().splitlines() if re.search(r"issue [0-9]", line, re.IGNORECASE)]
    assert mentions == [], f"{page.name} names issue numbers: say what the product does instead"
