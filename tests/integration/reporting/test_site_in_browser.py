"""The browsable report site in headless Chromium: each page type's DOM, and a screenshot of each."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from rlinf_bench.reporting.site import write_site
from tests.unit.reporting.sitefactory import NASTY, two_checkpoints

PAGES = {
    "index": "report.html",
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


# -- a task page's MP4 plays -----------------------------------------------------------------------

#: Waits for the first player to have a frame, plays it muted for a second, and reports what the browser says.
PLAY = """(async () => {
  const v = document.querySelector('video.player');
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const t0 = performance.now();
  while (v.readyState < 2 && !v.error && performance.now() - t0 < 15000) await sleep(50);
  const ready = v.readyState;
  v.muted = true;
  let refused = null;
  try { await v.play(); } catch (e) { refused = String(e); }
  const start = v.currentTime;
  await sleep(1000);
  v.pause();
  const box = v.getBoundingClientRect();
  return {players: document.querySelectorAll('video.player').length, ready, width: v.videoWidth,
          height: v.videoHeight, duration: v.duration, start, now: v.currentTime, refused,
          error: v.error && `${v.error.code}: ${v.error.message}`,
          box: [box.left, box.top, box.width, box.height]};
})()"""
SUPPORT = """(() => ({canPlayType: document.createElement('video').canPlayType(CODEC),
  mediaSource: window.MediaSource ? MediaSource.isTypeSupported(CODEC) : 'no MediaSource'}))()"""


def _avc_codec(mp4: Path) -> str:
    """The RFC 6381 codec string of an H.264 MP4 (``avc1.PPCCLL`` from its avcC box): what a browser is asked."""
    data = mp4.read_bytes()
    at = data.find(b"avcC")
    assert at > 0, f"{mp4} holds no H.264 (avcC) track"
    profile, compat, level = data[at + 5], data[at + 6], data[at + 7]
    return f"avc1.{profile:02X}{compat:02X}{level:02X}"


@pytest.fixture(scope="module")
def video_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A site whose episodes link a real H.264 MP4 written by the runner's own writer; (site, video)."""
    import numpy as np

    from eval_runner.video import write_video

    root = tmp_path_factory.mktemp("video-site")
    frames = []
    for i in range(40):  # 2 s at 20 fps: a red ramp that scrolls and a green block that moves
        frame = np.zeros((128, 128, 3), np.uint8)
        frame[..., 0] = (np.arange(128)[None, :] * 2 + 6 * i) % 256
        frame[32:96, 2 * i : 2 * i + 28, 1] = 255
        frames.append(frame)
    video = write_video(root / "ep0.mp4", frames)
    write_site(two_checkpoints(video), root / "out", baselines=[], title="rlinf-bench: exp")
    return root / "out", video


def test_task_page_mp4_plays_in_chromium_and_shows_its_frames(
    chromium: str, video_site: tuple[Path, Path], tmp_path: Path
) -> None:
    import matplotlib.image

    from tests.integration.reporting.cdp import Browser

    site, video = video_site
    codec = f'video/mp4; codecs="{_avc_codec(video)}"'
    with Browser(chromium, tmp_path / "cdp") as page:
        page.open((site / PAGES["task"]).as_uri())
        support = page.run(SUPPORT.replace("CODEC", json.dumps(codec)))
        if support["canPlayType"] != "probably" and support["mediaSource"] is not True:
            pytest.skip(f"{chromium} cannot play H.264 ({codec}): {support}; a build without proprietary codecs")
        played = page.run(PLAY)
        shot = page.screenshot(tmp_path / "task-video.png")

    assert played["players"] >= 1 and played["error"] is None and played["refused"] is None, played
    assert played["ready"] >= 2 and (played["width"], played["height"]) == (128, 128)  # the camera's resolution
    assert played["duration"] == pytest.approx(2.0, abs=0.1)
    assert played["now"] > played["start"] + 0.3, f"currentTime did not advance while playing: {played}"
    left, top, width, height = (round(x) for x in played["box"])
    pixels = matplotlib.image.imread(shot)[top : top + height, left : left + width, :3]
    red, green = pixels[..., 0], pixels[..., 1]
    assert red.std() > 0.1 and (green > 0.9).sum() > 500  # the ramp and the block, not a black or empty player
