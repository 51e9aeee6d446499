"""The browsable report site in headless Chromium: each page type's DOM, and a screenshot of each."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rlinf_bench.reporting.site import write_site
from tests.unit.reporting.sitefactory import NASTY, two_checkpoints

PAGES = {
    "index": "index.html",
    "checkpoint": "checkpoints/exp-step_200.html",
    "suite": "checkpoints/exp-step_200/libero_spatial.html",
    "task": "checkpoints/exp-step_200/libero_spatial/task_0.html",
}


def _chromium(chromium: str, *args: str, profile: Path) -> str:
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    video = root / "ep0.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42 fake")
    write_site(two_checkpoints(video), root / "out", baselines=[], title="rlinf-bench: exp")
    return root / "out"


def _dom(chromium: str, site: Path, page: str, tmp_path: Path) -> str:
    return _chromium(chromium, "--dump-dom", (site / PAGES[page]).as_uri(), profile=tmp_path / f"dom-{page}")


def test_index_links_every_checkpoint_and_escapes_cells(chromium: str, site: Path, tmp_path: Path) -> None:
    dom = _dom(chromium, site, "index", tmp_path)
    assert dom.count('href="checkpoints/exp-step_') == 2 and 'id="sr-curve"' in dom
    assert "<script>alert" not in dom and "&lt;script&gt;alert" in dom  # a text node, not a script element


def test_checkpoint_page_shows_the_verdict_the_change_and_each_runs_provenance(
    chromium: str, site: Path, tmp_path: Path
) -> None:
    dom = _dom(chromium, site, "checkpoint", tmp_path)
    assert re.search(r"environment changed: torch 2\.5\.1 → 2\.6\.0", dom)
    assert '<table class="changes">' in dom and "<td>package torch</td>" in dom
    assert dom.count("rlinf-bench evaluate --suite libero_spatial") == 3  # one column per run
    assert "MDE (80%)" in dom


def test_suite_page_links_tasks_and_counts_flips(chromium: str, site: Path, tmp_path: Path) -> None:
    dom = _dom(chromium, site, "suite", tmp_path)
    assert dom.count('href="libero_spatial/task_') == 3 and "14 state(s)" in dom


def test_task_page_grid_frames_flips_and_videos_link_or_say_no_video(chromium: str, site: Path, tmp_path: Path) -> None:
    dom = _dom(chromium, site, "task", tmp_path)
    assert dom.count('class="flip-to_failure"') == 14
    assert dom.count('class="video"') == 3 and dom.count("no video") == 147
    assert NASTY not in dom  # the task name is text in the title, escaped


@pytest.mark.parametrize("page", list(PAGES))
def test_each_page_type_renders_to_a_screenshot_with_tables(
    chromium: str, site: Path, tmp_path: Path, page: str
) -> None:
    import matplotlib.image

    shot = tmp_path / f"{page}.png"
    _chromium(
        chromium,
        f"--screenshot={shot}",
        "--window-size=1280,1200",
        (site / PAGES[page]).as_uri(),
        profile=tmp_path / "p",
    )
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1200, 1280)
    dark = (pixels.mean(axis=2) < 0.3).sum()
    assert dark > 3000 and pixels.std() > 0.05  # text and table rules, not a blank or error page
    if page == "task":
        # The grid: green (success) and red (failure) cells are both painted.
        r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
        assert ((g > r + 0.1) & (g > b)).sum() > 2000 and ((r > g + 0.2) & (r > b + 0.2)).sum() > 2000
