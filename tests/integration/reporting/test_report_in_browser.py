"""`rlinf-bench report` against a real MLflow store, opened in headless Chromium."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rlinf_bench.baselines import get_baselines, infra_target
from rlinf_bench.contracts import Measurement, ProbeResult, ProbeVerdict
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from rlinf_cli.main import main
from rlinf_tracking import load_history, publish_checkpoint
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs

BASELINES = get_baselines(["libero/openvla-oft-sft", "libero/openvla-oft-rlinf"])


def _probe() -> ProbeResult:
    target = infra_target("checkpoint_io", "save_s")
    return ProbeResult(
        probe="checkpoint_io",
        values={"save_s": Measurement(value=12.5, unit="s"), "load_s": Measurement(value=8.0, unit="s")},
        target=target,
        verdict=ProbeVerdict.PASS,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("report")
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(uri)
    client.create_experiment("RLinf", artifact_location=str(root / "artifacts"))
    rng = np.random.default_rng(8)
    for step, rate in ((100, 0.55), (200, 0.8), (300, 0.93)):
        runs = heterogeneous_runs(rng, np.clip(rng.beta(6, 1, size=(4, 25)) * rate / 0.86, 0, 1), ckpt=checkpoint(step))
        report = aggregate_checkpoint([SourcedRun(f"{step}-{r.run_index}", r) for r in runs])
        if step == 300:
            report.probes = [_probe()]
            report.infra = infra_checks(report.probes)
        history = load_history(client, "RLinf")
        apply_verdicts(report, BASELINES, history)
        publish_checkpoint(report, client=client, out_dir=root / f"pub{step}", history=history, baselines=BASELINES)
    out = root / "site"
    assert main(["report", "--tracking-uri", uri, "--out", str(out)]) == 0
    yield {"out": out, "root": root}


def _chromium(chromium: str, *args: str, profile: Path) -> subprocess.CompletedProcess[str]:
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
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def test_given_the_report_then_markdown_covers_every_checkpoint_and_the_checklist(site: dict) -> None:
    md = (site["out"] / "report.md").read_text()
    for step in ("| 100 |", "| 200 |", "| 300 |"):
        assert step in md
    assert "| checkpoint_io | save_s | 12.5 s | < 60 s | pass |" in md
    assert "| checkpoint_io | load_s | 8 s | < 60 s | pass |" in md
    assert "| Results are logged to MLflow for comparison | pass |" in md
    assert "![success rate vs global step](sr_vs_step.png)" in md


def test_given_the_html_then_chromium_renders_tables_and_the_embedded_curve(
    chromium: str, site: dict, tmp_path: Path
) -> None:
    html = site["out"] / "report.html"
    dom = _chromium(chromium, "--dump-dom", html.as_uri(), profile=tmp_path / "p1").stdout
    assert 'id="sr-curve"' in dom and 'src="data:image/png;base64,iVBORw0KGgo' in dom
    assert dom.count("<tr") >= 3 + 4 + 1 + 7  # history rows, task rows, summary, checklist
    assert "0: task_0" in dom and "Validation checklist" in dom and "global_step 300" in dom
    assert "http://" not in html.read_text() and "https://" not in html.read_text().replace(
        "https://json-schema", ""
    )  # self-contained: nothing to fetch


def test_given_the_html_then_a_screenshot_shows_the_curve_and_tables(chromium: str, site: dict, tmp_path: Path) -> None:
    import matplotlib.image

    shot = site["root"] / "screenshot.png"
    _chromium(
        chromium,
        f"--screenshot={shot}",
        "--window-size=1280,1600",
        (site["out"] / "report.html").as_uri(),
        profile=tmp_path / "p2",
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1600, 1280)
    # The curve: coloured (non-grey) pixels of the plotted lines appear in the upper part of the page.
    top = pixels[:800]
    colourful = (top.max(axis=2) - top.min(axis=2)) > 0.25
    assert colourful.sum() > 500
    # Tables and text: plenty of dark pixels, and the page is far from uniform.
    assert (pixels.mean(axis=2) < 0.3).sum() > 5000 and pixels.std() > 0.1


def test_given_checkpoints_read_back_from_mlflow_then_the_site_has_every_page_with_episode_rows(
    chromium: str, site: dict, tmp_path: Path
) -> None:
    out = site["out"]
    index = (out / "report.html").read_text()  # the one entry page drills down
    for step in (100, 200, 300):
        assert f'href="checkpoints/exp-step_{step}.html"' in index
    task = out / "checkpoints/exp-step_300/libero_spatial/task_0.html"
    dom = _chromium(chromium, "--dump-dom", task.as_uri(), profile=tmp_path / "p3").stdout
    # 25 states x 3 runs, each with its seed and steps, read back through MLflow's checkpoint_report.json
    assert dom.count('class="novideo"') == 75 and 'id="state-grid"' in dom
    assert "prev 0" in dom  # the previous checkpoint's outcomes next to this one's
