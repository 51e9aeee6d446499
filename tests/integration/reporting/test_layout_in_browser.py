"""Every page of the report at 800 and 1280 px in headless Chromium: no sideways scrolling, a visible margin on
both sides, flipped states as a table; on a report with very long task names, many flipped states, all seven
robustness axes at three levels and every failure reason (the widest tables the sections make)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.contracts import AXES, FailureReason, Perturbation
from rlinf_bench.reporting.site import write_site
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.integration.reporting.cdp import Browser
from tests.unit.stats.perturbedfactory import Perturbed, perturbed_run
from tests.unit.stats.runfactory import checkpoint

#: LIBERO names are one "word" of underscores; three of them end to end is longer than any screen.
LONG = "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate_" * 3
NAMES = {
    t: f"{LONG}{t}" if t % 2 == 0 else f"open_the_top_drawer_of_the_cabinet_and_put_the_bowl_inside_{t}"
    for t in range(10)
}
PAGES = {
    "report": "report.html",  # the entry page, with the checkpoint index
    "checkpoint": "checkpoints/exp-step_200.html",
    "suite": "checkpoints/exp-step_200/libero_spatial.html",
    "task": "checkpoints/exp-step_200/libero_spatial/task_0.html",
}
WIDTHS = (800, 1280)
MARGIN_PX = 16

#: The sections a page is also looked at from (scrolled to), when it has them.
SECTIONS = ("robustness", "failure-reasons")

#: Sideways overflow, the heading's distance from both edges, the flipped-states tables, the robustness section.
MEASURE = """(() => {
  const root = document.documentElement, h1 = document.querySelector('h1').getBoundingClientRect();
  const wide = [...document.querySelectorAll('table, img')].map(t => t.getBoundingClientRect().right);
  const rows = sel => [...document.querySelectorAll(sel)].length;
  return {scrollWidth: root.scrollWidth, innerWidth: window.innerWidth, clientWidth: root.clientWidth,
          left: h1.left, right: root.clientWidth - h1.right, widestRight: Math.max(0, ...wide),
          flipRows: rows('table.flips tbody tr'),
          runOn: [...document.querySelectorAll('p')].filter(p => (p.textContent.match(/flipped to/g) || []).length > 1).length,
          levelRows: rows('table.robustness tbody tr'), categoryRows: rows('table.categories tbody tr'),
          reasonRows: rows('table.reasons tbody tr'), curves: rows('img.curve'),
          sections: ['robustness', 'failure-reasons'].filter(id => document.getElementById(id))};
})()"""


REASONS = list(FailureReason)


def _reason(task: int, state: int, run: int, p: Perturbation | None) -> FailureReason:
    """Every reason appears: state s fails for reason s mod 10 (perturbed ones one further)."""
    return REASONS[(state + (1 if p is not None else 0) + run) % len(REASONS)]


def _runs(step: int, outcomes: dict[int, list[int]]) -> list[Any]:
    """Every task under all seven axes at three levels (on the states the standard episode passes or fails alike)."""
    perturbed: Perturbed = {(axis, level): dict(outcomes) for axis in AXES for level in (1, 2, 3)}
    return [
        perturbed_run(outcomes, perturbed, run_index=i, ckpt=checkpoint(step), task_names=NAMES, reason_of=_reason)
        for i in range(3)
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two checkpoints; at step 200 half of every task's states flipped to failure, the other half to success."""
    before = aggregate_checkpoint(
        [SourcedRun(f"a{r.run_index}", r) for r in _runs(100, {t: [1] * 25 + [0] * 25 for t in NAMES})]
    )
    apply_verdicts(before, [])
    now = aggregate_checkpoint(
        [SourcedRun(f"b{r.run_index}", r) for r in _runs(200, {t: [0] * 25 + [1] * 25 for t in NAMES})]
    )
    apply_verdicts(now, [], [before])
    out = tmp_path_factory.mktemp("layout") / "site"
    write_site([before, now], out, baselines=[], title="rlinf-bench: exp")
    return out


@pytest.fixture(scope="module")
def measured(chromium: str, site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Any]:
    """Each page at each width: the measurements and a screenshot of its top (kept for a person to look at)."""
    shots = tmp_path_factory.mktemp("layout-shots")
    found: dict[tuple[str, int], Any] = {}
    with Browser(chromium, shots / "profile") as page:
        for width in WIDTHS:
            for name, rel in PAGES.items():
                page.open((site / rel).as_uri(), width=width, height=900)
                m = {**page.run(MEASURE), "shot": page.screenshot(shots / f"{name}-{width}.png")}
                for section in m["sections"]:
                    page.run(f"document.getElementById('{section}').scrollIntoView()")
                    m[f"shot-{section}"] = page.screenshot(shots / f"{name}-{section}-{width}.png")
                found[(name, width)] = m
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", list(PAGES))
def test_no_page_scrolls_sideways_and_each_keeps_a_margin(
    measured: dict[tuple[str, int], Any], page: str, width: int
) -> None:
    import matplotlib.image

    m = measured[(page, width)]
    assert m["scrollWidth"] <= m["innerWidth"], m  # the page itself never scrolls sideways
    assert m["left"] >= MARGIN_PX and m["right"] >= MARGIN_PX, m
    assert m["widestRight"] <= m["clientWidth"] - MARGIN_PX, m  # a wide table scrolls inside its own box
    client = int(m["clientWidth"])
    for shot in [m["shot"], *(m[f"shot-{s}"] for s in m["sections"])]:
        pixels = matplotlib.image.imread(shot)[..., :3]
        for strip in (pixels[:, :MARGIN_PX], pixels[:, client - MARGIN_PX : client]):
            assert strip.min() > 0.95, f"{shot.name}: ink in the margin"  # white: nothing drawn there
        assert (pixels.mean(axis=2) < 0.3).sum() > 3000  # and the page has text


@pytest.mark.parametrize("page", ["report", "checkpoint"])
def test_flipped_states_are_a_table_row_per_task_not_a_paragraph(
    measured: dict[tuple[str, int], Any], page: str
) -> None:
    m = measured[(page, 1280)]

    assert m["flipRows"] == len(NAMES) and m["runOn"] == 0, m


def test_the_robustness_section_and_the_reasons_are_on_their_pages(measured: dict[tuple[str, int], Any]) -> None:
    suite, task = measured[("suite", 1280)], measured[("task", 1280)]
    assert suite["sections"] == list(SECTIONS) and task["sections"] == ["failure-reasons"]
    assert suite["levelRows"] == len(AXES) * 3 and suite["curves"] == 1
    assert suite["categoryRows"] == 2  # a row per checkpoint, LIBERO-plus's table
    assert suite["reasonRows"] == len(NAMES) and task["reasonRows"] == len(REASONS)
