"""The browsable site: pages per checkpoint, suite and task, escaped cells, videos, provenance, upload."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.contracts import Provenance, VerdictValue
from rlinf_bench.document_store import Storage
from rlinf_bench.reporting.markdown import checkpoint_markdown
from rlinf_bench.reporting.notify import email_text, slack_payload
from rlinf_bench.reporting.pages import checkpoint_slug
from rlinf_bench.reporting.site import upload_site, write_site
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_suite
from rlinf_bench.stats.provenance_diff import environment_changes, provenance_fields
from tests.unit.reporting.sitefactory import NASTY, two_checkpoints
from tests.unit.stats.runfactory import make_run


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("site")
    video = root / "ep0.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42 fake")
    reports = two_checkpoints(video)
    files = write_site(reports, root / "out", baselines=[], title="t")
    return {"files": files, "reports": reports, "out": root / "out"}


def test_given_two_checkpoints_then_the_one_entry_page_drills_down_to_every_page_type(site: dict) -> None:
    out: Path = site["out"]
    assert site["files"].html == out / "report.html"
    entry = (out / "report.html").read_text()
    for r in site["reports"]:
        slug = checkpoint_slug(r)
        assert f'href="checkpoints/{slug}.html"' in entry
        assert (out / f"checkpoints/{slug}.html").is_file()
        assert (out / f"checkpoints/{slug}/libero_spatial.html").is_file()
        assert (out / f"checkpoints/{slug}/libero_spatial/task_0.html").is_file()
    assert not (out / "index.html").exists()  # one entry page: the one printed and linked
    task = (out / "checkpoints/exp-step_200/libero_spatial/task_0.html").read_text()
    assert 'href="../../../report.html"' in task  # every breadcrumb leads back to it


def test_without_the_pages_the_entry_page_links_nowhere(tmp_path: Path) -> None:
    files = write_site(two_checkpoints(), tmp_path, baselines=[], title="t", pages=False)
    assert 'href="checkpoints/' not in files.html.read_text() and files.pages == []


def test_given_html_in_a_task_name_then_every_page_escapes_it(site: dict) -> None:
    pages = [p for p in site["files"].all if p.suffix == ".html"]
    assert len(pages) == 1 + 2 * (1 + 1 + 3)  # the entry page, and per checkpoint: page, suite, 3 tasks
    for page in pages:
        text = page.read_text()
        assert "<script>" not in text and "<b>bold" not in text, page
    suite_page = (site["out"] / "checkpoints/exp-step_200/libero_spatial.html").read_text()
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in suite_page


def test_given_a_recorded_and_a_missing_video_then_a_link_and_no_video(site: dict) -> None:
    task = (site["out"] / "checkpoints/exp-step_200/libero_spatial/task_0.html").read_text()
    links = {line for line in task.split('"') if line.startswith("../../../videos/")}
    assert len(links) == 1 and (site["out"] / "checkpoints/exp-step_200/libero_spatial" / next(iter(links))).is_file()
    assert task.count('class="video"') == 3  # state 0, three runs
    assert task.count("no video") == 150 - 3  # state 1's file is outside its run's folder: no video, and why
    assert "/nonexistent/episode_1.mp4&#39; not read: outside the run&#39;s own folder" in task
    assert 'href="/nonexistent' not in task and 'src="/nonexistent' not in task


def test_given_recorded_videos_then_the_task_page_embeds_each_once_failures_first(site: dict) -> None:
    import re

    task = (site["out"] / "checkpoints/exp-step_200/libero_spatial/task_0.html").read_text()
    players = re.findall(r'<video class="player" controls preload="metadata" src="([^"]+)">', task)
    assert len(players) == 1  # state 0's one file, recorded in three runs: embedded once
    assert (site["out"] / "checkpoints/exp-step_200/libero_spatial" / players[0]).is_file()
    other = (site["out"] / "checkpoints/exp-step_200/libero_spatial/task_1.html").read_text()
    assert "<video" not in other and "No video of this task was recorded" in other


def test_given_flips_then_the_task_grid_frames_them_and_the_suite_counts_them(site: dict) -> None:
    task = (site["out"] / "checkpoints/exp-step_200/libero_spatial/task_0.html").read_text()
    assert task.count('class="flip-to_failure"') == 4 + 10  # states 0, 3, 7, 11 and 20-29
    suite = (site["out"] / "checkpoints/exp-step_200/libero_spatial.html").read_text()
    assert "14 state(s)" in suite and "10 state(s)" in suite and "global_step 100" in suite


def test_given_a_changed_torch_then_the_checkpoint_page_shows_it_next_to_the_verdict(site: dict) -> None:
    page = (site["out"] / "checkpoints/exp-step_200.html").read_text()
    assert "What changed besides the weights" in page
    assert "<td>package torch</td><td>packages</td><td>2.5.1</td><td>2.6.0</td>" in page
    assert "rlinf-bench evaluate --suite libero_spatial" in page  # provenance of each run


def test_given_an_older_report_without_episode_rows_then_the_grid_uses_counts(tmp_path: Path) -> None:
    reports = two_checkpoints()
    for r in reports:
        for s in r.suites:
            s.states = [st.model_copy(update={"episodes": []}) for st in s.states]
            for run in s.runs:
                run.provenance = None
    write_site(reports, tmp_path, baselines=[], title="old")
    task = (tmp_path / "checkpoints/exp-step_200/libero_spatial/task_1.html").read_text()
    assert "No per-episode rows in this report" in task and 'class="ok"' in task
    page = (tmp_path / "checkpoints/exp-step_200.html").read_text()
    assert page.count("unknown") > 10


def test_upload_site_stores_the_pages_under_the_prefix_and_returns_the_entry_page(tmp_path: Path) -> None:
    before, now = two_checkpoints()
    entry = upload_site(
        now, [before, now], str(tmp_path / "report" / "site"), Storage(), baselines=[], results_root=str(tmp_path)
    )
    assert entry == str(tmp_path / "report" / "site" / "report.html") and Path(entry).is_file()
    stored = {p.relative_to(tmp_path / "report" / "site").as_posix() for p in (tmp_path / "report").rglob("*.html")}
    assert "checkpoints/exp-step_200/libero_spatial/task_0.html" in stored
    assert not any("exp-step_100/" in s for s in stored)  # only this checkpoint's pages; older ones have theirs


# -- provenance diff ----------------------------------------------------------------------------------
def _suite(**packages: str) -> object:
    runs = [
        make_run({0: [1, 0]}, run_index=i).model_copy(update={"provenance": Provenance(packages=dict(packages))})
        for i in range(3)
    ]
    return aggregate_suite([SourcedRun(str(i), r) for i, r in enumerate(runs)], 3)


def test_given_two_runs_differing_in_one_package_then_exactly_that_change() -> None:
    changes = environment_changes(
        _suite(torch="2.6.0", transformers="4.40.1", mujoco="3.2.0"),  # type: ignore[arg-type]
        _suite(torch="2.6.0", transformers="4.40.0", mujoco="3.2.0"),  # type: ignore[arg-type]
    )
    assert [(c.field, c.before, c.now) for c in changes] == [("package transformers", "4.40.0", "4.40.1")]


def test_given_a_field_absent_on_one_side_then_unknown_and_not_a_change() -> None:
    old, new = _suite(torch="2.6.0"), _suite(torch="2.6.0", transformers="4.40.1")
    assert environment_changes(new, old) == []  # type: ignore[arg-type]
    assert provenance_fields([None])["package transformers"] == ("packages", "unknown")


def test_given_policy_settings_nested_under_a_served_policy_then_they_are_compared() -> None:
    a = Provenance(extra={"policy": {"server": {"precision": "bf16", "chunk_size": 8}}})
    b = Provenance(extra={"policy": {"precision": "fp32", "chunk_size": 8}})
    fa, fb = provenance_fields([a]), provenance_fields([b])
    assert fa["policy precision"][1] == "bf16" and fb["policy precision"][1] == "fp32"
    assert fa["policy chunk size"] == fb["policy chunk size"] == ("policy", "8")


# -- short forms ----------------------------------------------------------------------------------------
def test_given_flips_then_email_slack_and_markdown_carry_the_short_form() -> None:
    _, now = two_checkpoints()
    v = next(v for v in now.verdicts if v.kind == "previous")
    assert v.value == VerdictValue.BELOW and v.reason.startswith("environment changed: torch 2.5.1 → 2.6.0")
    text = email_text(now)
    assert f"task 0 ({NASTY}): 14 states flipped to failure (vs global_step 100)" in text
    line = next(x for x in text.splitlines() if "▼ below vs previous (global_step 100): " in x)
    assert "p = " in line and "sees drops ≥ " in line and line.endswith("environment changed: torch 2.5.1 → 2.6.0")
    assert "— BELOW previous; environment changed" in text.splitlines()[0]
    slack = str(slack_payload(now))
    assert "task 1 (pick_up_the_bowl): 10 states flipped to failure" in slack
    assert "vs previous (global_step 100): " in slack and "environment changed: torch 2.5.1 → 2.6.0" in slack
    md = checkpoint_markdown(now)
    assert "## Flipped initial states" in md and "## What changed besides the weights" in md
    assert "| MDE (80%) |" in md


def test_upload_site_to_s3_copies_stored_videos_and_says_why_others_are_not(tmp_path: Path) -> None:
    import boto3
    from moto import mock_aws

    mp4 = b"\x00\x00\x00\x18ftypmp42"
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="results")
        s3.put_object(Bucket="results", Key="exp/libero_spatial/run0.videos/ep0.mp4", Body=mp4)
        s3.put_object(Bucket="results", Key="alice/libero_spatial/run0.videos/ep2.mp4", Body=mp4 + b"alice's")
        before, now = two_checkpoints()
        names = {
            0: "s3://results/exp/libero_spatial/run0.videos/ep0.mp4",
            1: "s3://results/exp/libero_spatial/run0.videos/gone.mp4",  # never stored
            2: "s3://results/alice/libero_spatial/run0.videos/ep2.mp4",  # another user's results
        }
        for suite in now.suites:
            for st in suite.states:
                if st.task_id == 0 and st.init_state in names:
                    st.episodes = [e.model_copy(update={"video": names[st.init_state]}) for e in st.episodes]
        storage = Storage(S3Objects(s3))
        entry = upload_site(
            now, [before], "s3://results/exp/report/site", storage, baselines=[], results_root="s3://results/exp"
        )
        assert entry == "s3://results/exp/report/site/report.html"
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket="results", Prefix="exp/report/site/")["Contents"]}
        assert "exp/report/site/checkpoints/exp-step_200/libero_spatial/task_0.html" in keys
        (video,) = [k for k in keys if k.startswith("exp/report/site/videos/")]
        assert s3.head_object(Bucket="results", Key=video)["ContentType"] == "video/mp4" and video.endswith(".mp4")
        head = s3.head_object(Bucket="results", Key="exp/report/site/report.html")
        assert head["ContentType"].startswith("text/html")
        task = storage.read_text("s3://results/exp/report/site/checkpoints/exp-step_200/libero_spatial/task_0.html")
        assert task.count('class="video"') == 3
        assert task.count("it does not exist") == 3 and task.count("outside the run&#39;s own folder") == 3


def test_embedded_videos_put_failures_before_successes() -> None:
    from rlinf_bench.reporting.pages import _players

    rows = [
        {"state": 0, "run_index": 0, "success": True, "video_href": "a.mp4"},
        {"state": 3, "run_index": 1, "success": False, "video_href": "b.mp4"},
        {"state": 4, "run_index": 0, "success": True, "video_href": None},
    ]
    assert [p["video_href"] for p in _players(rows)] == ["b.mp4", "a.mp4"]


def test_non_ascii_experiments_of_one_step_get_pages_of_their_own(tmp_path: Path) -> None:
    reports = []
    for name in ("实验", "训练"):
        report = two_checkpoints()[1]
        report.experiment = name
        report.checkpoint_uri = f"s3://b/{name}/checkpoints/global_step_200/"
        reports.append(report)
    slugs = [checkpoint_slug(r) for r in reports]
    assert len(set(slugs)) == 2 and all(s.isascii() and s.startswith("exp-step_200-") for s in slugs)
    write_site(reports, tmp_path, baselines=[], title="t")
    for slug in slugs:
        assert (tmp_path / f"checkpoints/{slug}/libero_spatial/task_0.html").is_file()
