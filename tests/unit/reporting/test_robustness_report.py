"""The robustness section and the failure reasons in every renderer: the suite page (levels with their controls,
the curve, verdicts per axis, the category table over checkpoints), the task page (reasons beside the videos,
one video per reason), markdown, the headline, the summary line (only when something moved), MLflow metrics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.format import headline
from rlinf_bench.reporting.markdown import checkpoint_markdown
from rlinf_bench.reporting.messages import summary_notification
from rlinf_bench.reporting.site import write_site
from rlinf_bench.reporting.summary_lines import robustness_line
from rlinf_bench.stats.verdicts import apply_verdicts
from rlinf_tracking.mlflow_publish import parent_metrics, parent_tags
from tests.unit.reporting.robustfactory import TASKS, robust_checkpoints, robust_runs
from tests.unit.stats.perturbedfactory import report_of

STEP_200 = "checkpoints/exp-step_200"


@pytest.fixture(scope="module")
def reports() -> list[CheckpointReport]:
    return robust_checkpoints()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("robust-site")
    video = root / "runs" / "ep0.mp4"
    video.parent.mkdir()
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42 fake")
    perturbed = root / "runs" / "task01_init00_camera2.mp4"
    perturbed.write_bytes(b"\x00\x00\x00\x18ftypmp42 perturbed")
    out = root / "site"
    write_site(robust_checkpoints(video, perturbed), out, baselines=[], title="rlinf-bench: exp")
    return out


def test_the_suite_page_shows_each_level_beside_its_control_the_curve_and_the_flag(site: Path) -> None:
    page = (site / STEP_200 / "libero_spatial.html").read_text()
    rows = re.findall(r'<tr data-axis="(\w+)"><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td>', page)
    assert [r[1] for r in rows] == [
        "camera level 1 (5 deg)",
        "camera level 2 (10 deg)",
        "camera level 3 (15 deg)",
        "light level 1 (0.25 intensity factor)",
        "layout level 1 (0.02 m)",
    ]
    # camera level 1 at step 200: states 0-3 of 50 fail in every task and run; the twins fail 2 states (420/450)
    assert rows[0][2].startswith("92.0% [") and rows[0][3] == "93.3%" and rows[0][4].startswith("-1.3 pts [")
    assert '<p class="warn flag">⚑ standard SR rose' in page and "while camera fell -8.0 pts" in page
    png = site / STEP_200 / "libero_spatial-robustness.png"
    assert 'src="libero_spatial-robustness.png"' in page and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_suite_page_has_the_verdict_per_axis_and_libero_plus_table_with_a_row_per_checkpoint(site: Path) -> None:
    page = (site / STEP_200 / "libero_spatial.html").read_text()
    verdicts = page[page.index('class="axis-verdicts"') :]
    assert re.search(
        r"<td>camera</td><td><span class=\"below\">▼ below</span></td><td>84.0%</td><td>92.0%</td>", verdicts
    )
    table = page[page.index('class="categories"') :]
    heads = re.findall(r"<th>([^<]+)</th>", table[: table.index("</thead>")])
    assert heads == ["checkpoint", "Camera", "Robot", "Language", "Light", "Background", "Noise", "Layout", "Total"]
    body = table[: table.index("</table>")]
    assert "<td>exp global_step 100</td><td>92.0%</td><td>—</td>" in body
    assert "<td>exp global_step 200</td><td>84.0%</td><td>—</td>" in body


def test_the_task_page_puts_the_reasons_beside_the_videos_with_one_video_per_reason(site: Path) -> None:
    page = (site / STEP_200 / "libero_spatial" / "task_2.html").read_text()
    assert page.index("<h2>Videos</h2>") < page.index('id="failure-reasons"') < page.index("<h2>Initial states</h2>")
    row = re.search(r'<tr data-reason="grasp_failed">(.*?)</tr>', page)
    assert row is not None
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells[:4] == ["grasp failed", "18", "6", "<b>+12</b>"]
    assert 'class="video"' in cells[5] and "state 0, run 0" in cells[5]
    players = page[page.index('<div class="players reasons">') :]
    assert players.count("<figure>") == 1 and '<span class="ko">grasp failed</span>: state 0, run 0' in players
    never = re.search(r'<tr data-reason="never_reached">(.*?)</tr>', page)
    assert never is not None and re.findall(r"<td>(.*?)</td>", never.group(1))[4] == "87"  # perturbed episodes
    assert page.count("<td>grasp failed</td>") == 1 + 18  # the reasons table, then each failed episode's row


def test_a_recorded_perturbed_episode_is_linked_from_its_level_on_the_suite_page_and_played_on_its_task_page(
    site: Path,
) -> None:
    # GIVEN run 0's failed camera level 2 episode of task 1, state 0 recorded a video
    suite_page = (site / STEP_200 / "libero_spatial.html").read_text()
    # WHEN the pages are written THEN its level's row links it, and the levels without a video say so
    rows = dict(
        re.findall(r'<tr data-axis="\w+"><td>([^<]+)</td>.*?<td>([^<]*|<a [^>]+>[^<]+</a>)</td></tr>', suite_page)
    )
    link = re.fullmatch(
        r'<a class="video" href="([^"]+)">task 1, state 0, run 0: never reached</a>', rows["camera level 2 (10 deg)"]
    )
    assert link is not None and rows["camera level 1 (5 deg)"] == "—"
    copy = (site / STEP_200 / link.group(1)).resolve()
    assert copy.name.endswith("-task01_init00_camera2.mp4") and copy.read_bytes().endswith(b"perturbed")
    # ... and task 1's page plays it with its axis, level and reason; task 0's page has no such section
    task_page = (site / STEP_200 / "libero_spatial" / "task_1.html").read_text()
    players = task_page[task_page.index('<div class="players perturbed">') :]
    assert players.count("<figure") == 1 and copy.name in players
    assert 'camera level 2 (10 deg): state 0, run 0: <span class="ko">never reached</span>' in players
    never = re.search(r'<tr data-reason="never_reached">(.*?)</tr>', task_page)
    assert never is not None and re.findall(r"<td>(.*?)</td>", never.group(1))[4].startswith("87 <a class=")
    assert f'href="{link.group(1).replace("../", "../../", 1)}">camera 2, state 0, run 0</a>' in never.group(1)
    assert 'id="perturbed-videos"' not in (site / STEP_200 / "libero_spatial" / "task_0.html").read_text()


def test_the_checkpoint_page_links_each_suites_robustness(site: Path) -> None:
    page = (site / f"{STEP_200}.html").read_text()
    assert '<a href="exp-step_200/libero_spatial.html#robustness">libero_spatial</a>' in page
    assert "⚑ libero_spatial: standard SR rose" in page and "<th>suite</th><th>Camera</th>" in page


def test_the_markdown_report_has_the_section_the_table_and_the_moves(reports: list[CheckpointReport]) -> None:
    md = checkpoint_markdown(reports[1])
    assert "## Robustness" in md and "## Why it failed" in md
    assert "| suite | Camera | Robot | Language | Light | Background | Noise | Layout | Total |" in md
    assert "| libero_spatial | 84.0% | — | — | 96.0% | — | — | 70.0% | 86.2% |" in md
    assert f"- **12 more grasp failed on task 2 ({TASKS[2]}) than at global_step 100 (6 → 18)**" in md


def test_the_headline_and_the_summary_say_what_moved_in_one_line(reports: list[CheckpointReport]) -> None:
    now = reports[1]
    assert headline(now).endswith("; SR rose while camera fell")
    note = summary_notification(now)
    lines = [line for line in note.text.splitlines() if "robustness vs" in line]
    assert lines == [
        "  robustness vs global_step 100: camera ▼ below (-8.0 pts, p = <1e-4) while the standard SR rose +2.7 pts; "
        f"12 more grasp failed on task 2 ({TASKS[2]}) than at global_step 100 (6 → 18)"
    ]
    assert "robustness vs global_step 100: camera" in str(note.slack)


def test_no_summary_line_when_nothing_moved(reports: list[CheckpointReport]) -> None:
    first = reports[0]  # no previous checkpoint
    assert robustness_line(first.suites[0]) is None and "robustness vs" not in summary_notification(first).text
    again = apply_verdicts(report_of(robust_runs(200)), [], previous_report=report_of(robust_runs(200)))
    assert robustness_line(again.suites[0]) is None and "SR rose while" not in headline(again)


def test_mlflow_gets_the_rates_per_axis_and_level_the_drop_the_categories_and_the_reason_counts(
    reports: list[CheckpointReport],
) -> None:
    metrics, tags = parent_metrics(reports[1]), parent_tags(reports[1])
    assert metrics["robustness/camera/1"] == pytest.approx(414 / 450)  # 46 of 50 states, 3 tasks, 3 runs
    assert metrics["robustness/camera/1/libero_spatial"] == pytest.approx(414 / 450)
    assert metrics["robustness_drop/camera/1"] == pytest.approx((420 - 414) / 450)
    assert metrics["robustness_category/libero_spatial/camera"] == pytest.approx(0.84)
    assert metrics["robustness_category/libero_spatial/total"] == pytest.approx(
        reports[1].suites[0].robustness.totals[0].success_rate
    )  # type: ignore[union-attr]
    assert metrics["failure_reasons/libero_spatial/grasp_failed"] == 18.0
    assert metrics[f"failure_reasons/libero_spatial/{TASKS[2]}/grasp_failed"] == 18.0
    assert tags["robustness_verdict/libero_spatial/camera"] == "below"
    assert tags["rlinf_bench.robustness_flag"] == "libero_spatial/camera"
    first = parent_tags(reports[0])  # no previous checkpoint: rates, no verdicts
    assert "robustness/camera/1" in parent_metrics(reports[0]) and not any("robustness" in k for k in first)
