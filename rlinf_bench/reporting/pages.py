"""The browsable report site: report.html (the entry page) -> checkpoint -> suite (tasks, robustness, failure
reasons) -> task (initial-state grid, episode rows, failure reasons with one video each).

Every page is rendered from a Jinja2 template with autoescape (see :mod:`templating`). Pages link to
each other with relative URLs, so the same folder works from disk, from an S3 prefix behind a web
front, or zipped. Videos are copied next to the pages, read only through an
:class:`~rlinf_bench.reporting.episode_files.EpisodeFiles` (each from inside its own run's folder, checked by
content and size); one that is refused or cannot be read shows "no video" and why.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlinf_bench.contracts import CheckpointReport, Provenance, StateEpisode, StateOutcome, SuiteReport
from rlinf_bench.contracts.identifiers import ascii_part
from rlinf_bench.contracts.layout import ENTRY_PAGE  # every page's breadcrumbs lead back to it
from rlinf_bench.reporting.episode_files import EpisodeFiles, read_episode_video
from rlinf_bench.reporting.format import checkpoint_title
from rlinf_bench.reporting.robustness_pages import (
    VideoLink,
    checkpoint_robustness,
    perturbed_players,
    reasons_players,
    suite_reasons,
    suite_robustness,
    task_reasons,
)
from rlinf_bench.reporting.templating import render
from rlinf_bench.stats.provenance_diff import provenance_fields
from rlinf_bench.stats.verdicts import pick_previous_and_best

__all__ = ["ENTRY_PAGE", "checkpoint_slug", "write_pages"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def checkpoint_slug(report: CheckpointReport) -> str:
    """Folder name of a checkpoint's pages: ``<experiment>-step_<N>`` (the URI's digest without a step).

    An experiment name that does not survive as a file name unchanged (``实验``, ``café run``) keeps its
    readable ASCII part and gains the URI's digest, so two such names never share a folder.
    """
    digest = hashlib.sha256(report.checkpoint_uri.encode()).hexdigest()[:12]
    if report.global_step is None:
        return "ckpt-" + digest
    experiment = report.experiment or "checkpoint"
    if _slug(experiment) == experiment:
        return f"{experiment}-step_{report.global_step}"
    readable = ascii_part(experiment, 40) or "exp"
    return f"{readable}-step_{report.global_step}-{digest[:8]}"


def _provenance_rows(suite: SuiteReport) -> list[tuple[str, list[str]]]:
    """field -> value per run: the diffed fields first, then the rest of what a run records."""
    per_run: list[Provenance | None] = [r.provenance for r in suite.runs]
    fields = [provenance_fields([p]) for p in per_run]
    rows = [(name, [f[name][1] for f in fields]) for name in (fields[0] if fields else {})]

    def get(attr: str) -> list[str]:
        out = []
        for p in per_run:
            value: Any = getattr(p, attr) if p is not None else None
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            out.append(str(value) if value not in (None, "", []) else "unknown")
        return out

    for label, attr in (
        ("python", "python"),
        ("git sha", "git_sha"),
        ("host", "host"),
        ("platform", "platform"),
        ("cpu", "cpu"),
        ("gpus", "gpu"),
        ("weights sha256", "checkpoint_sha256"),
        ("command", "command"),
    ):
        rows.append((label, get(attr)))
    return rows


@dataclass
class _Site:
    out: Path
    reports: Sequence[CheckpointReport]
    files: EpisodeFiles | None
    written: list[Path] = field(default_factory=list)
    #: (checkpoint, suite, run, name) -> the copy's path under the site, or why there is none
    videos: dict[tuple[str, str, int, str], tuple[str | None, str]] = field(default_factory=dict)

    def write(self, rel: str, html: str) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        self.written.append(path)

    def video(
        self, report: CheckpointReport, suite: str, run_index: int, name: str | None, root: str
    ) -> tuple[str | None, str]:
        """Relative link to a copy of the video run ``run_index`` named ``name``, or None and why there is none
        ("" when none was recorded)."""
        if not name:
            return None, ""
        key = (report.checkpoint_uri, suite, run_index, name)
        if key not in self.videos:
            self.videos[key] = self._copy(report, suite, run_index, name)
        rel, why = self.videos[key]
        return (None, why) if rel is None else (root + rel, "")

    def links(self, report: CheckpointReport, suite: str, root: str) -> VideoLink:
        """Links to copies of ``suite``'s videos from a page ``root`` below the site's top."""
        return lambda run_index, name: self.video(report, suite, run_index, name, root)[0]

    def _copy(self, report: CheckpointReport, suite: str, run_index: int, name: str) -> tuple[str | None, str]:
        if self.files is None:
            return None, ""
        got = read_episode_video(self.files, report, suite, run_index, name)
        if isinstance(got, str):
            return None, got
        # Named after its content (one copy of a file several runs name) and its stem; the suffix is the
        # content's, not the name's.
        digest = hashlib.sha256(got.data).hexdigest()[:12]
        rel = f"videos/{digest}-{_slug(got.stem)}{got.media_type.suffix}"
        if not (self.out / rel).exists():
            self.write_bytes(rel, got.data)
        return rel, ""

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.written.append(path)


def _crumbs(root: str, *rest: tuple[str, str | None]) -> list[tuple[str, str | None]]:
    return [("report", f"{root}{ENTRY_PAGE}"), *rest]


def _write_checkpoint(site: _Site, report: CheckpointReport) -> None:
    slug = checkpoint_slug(report)
    title = checkpoint_title(report)
    site.write(
        f"checkpoints/{slug}.html",
        render(
            "checkpoint.html.j2",
            title=title,
            crumbs=_crumbs("../", (title, None)),
            report=report,
            suite_links={s.suite: f"{slug}/{_slug(s.suite)}.html" for s in report.suites},
            provenance={s.suite: _provenance_rows(s) for s in report.suites},
            robustness=checkpoint_robustness(report),
        ),
    )
    for suite in report.suites:
        prev, _ = pick_previous_and_best(report, site.reports, suite.suite)
        _write_suite(site, report, suite, prev)


def _write_suite(
    site: _Site, report: CheckpointReport, suite: SuiteReport, prev: tuple[str, SuiteReport] | None
) -> None:
    slug, name = checkpoint_slug(report), _slug(suite.suite)
    title = f"{checkpoint_title(report)} / {suite.suite}"
    flips = Counter(f.task_id for f in suite.flips)
    flagged = [t.disagreement for t in suite.tasks if t.disagreement is not None]
    robustness = _suite_robustness(site, report, suite)
    site.write(
        f"checkpoints/{slug}/{name}.html",
        render(
            "suite.html.j2",
            title=title,
            crumbs=_crumbs("../../", (checkpoint_title(report), f"../{slug}.html"), (suite.suite, None)),
            suite=suite,
            previous_label=prev[0] if prev else "",
            previous_rates={t.task_id: t.success_rate_mean for t in prev[1].tasks} if prev else {},
            task_links={t.task_id: f"{name}/task_{t.task_id}.html" for t in suite.tasks},
            flip_counts={k: f"{v} state(s)" for k, v in flips.items()},
            correction=flagged[0].correction if flagged else "",
            robustness=robustness,
            reasons=suite_reasons(suite),
        ),
    )
    for task in suite.tasks:
        _write_task(site, report, suite, task.task_id, prev)


def _suite_robustness(site: _Site, report: CheckpointReport, suite: SuiteReport) -> dict[str, Any] | None:
    """The suite page's robustness context, its curve written next to the page (``curve``: its relative link)."""
    players = perturbed_players(suite, site.links(report, suite.suite, "../../"))
    found = suite_robustness(report, suite, site.reports, players)
    if found is None:
        return None
    context, png = found
    curve = f"{_slug(suite.suite)}-robustness.png"
    if png is not None:
        site.write_bytes(f"checkpoints/{checkpoint_slug(report)}/{curve}", png)
    return {**context, "curve": curve if png is not None else ""}


def _cells(state: StateOutcome | None, runs: list[int]) -> list[str]:
    if state is None:
        return ["na"] * len(runs)
    by_run = {e.run_index: e.success for e in state.episodes}
    return ["na" if r not in by_run else ("ok" if by_run[r] else "ko") for r in runs]


def _write_task(
    site: _Site, report: CheckpointReport, suite: SuiteReport, task_id: int, prev: tuple[str, SuiteReport] | None
) -> None:
    slug, name = checkpoint_slug(report), _slug(suite.suite)
    task = next(t for t in suite.tasks if t.task_id == task_id)
    root = "../../../"
    runs = [r.run_index for r in suite.runs if r.status.value == "complete"]
    states = {s.init_state: s for s in suite.states if s.task_id == task_id}
    before = {s.init_state: s for s in prev[1].states if s.task_id == task_id} if prev else {}
    prev_runs = [r.run_index for r in prev[1].runs if r.status.value == "complete"] if prev else []
    flips = {f.init_state: f.direction for f in suite.flips if f.task_id == task_id}
    grid = [
        {
            "state": st,
            "now": _cells(states.get(st), runs),
            "before": _cells(before.get(st), prev_runs) if prev else [],
            "flip": flips.get(st, ""),
        }
        for st in sorted(set(states) | set(before))
    ]
    episodes = [
        _episode_row(site, report, suite.suite, s.init_state, e, root)
        for s in sorted(states.values(), key=lambda x: x.init_state)
        for e in s.episodes
    ]
    title = f"{checkpoint_title(report)} / {suite.suite} / task {task.task_id}: {task.task_name}"
    players = _players(episodes)
    reason_players = reasons_players(episodes)
    perturbed = perturbed_players(suite, site.links(report, suite.suite, root), task_id)
    site.write(
        f"checkpoints/{slug}/{name}/task_{task_id}.html",
        render(
            "task.html.j2",
            title=title,
            crumbs=_crumbs(
                root,
                (checkpoint_title(report), f"../../{slug}.html"),
                (suite.suite, f"../{name}.html"),
                (f"task {task.task_id}", None),
            ),
            runs=runs,
            previous_runs=prev_runs,
            previous_label=prev[0] if prev else "",
            grid=grid,
            players=players,
            episodes=episodes,
            reasons=task_reasons(suite, task_id, reason_players, perturbed),
            reason_players=reason_players,
            perturbed_players=perturbed,
        ),
    )


def _episode_row(
    site: _Site, report: CheckpointReport, suite: str, state: int, e: StateEpisode, root: str
) -> dict[str, Any]:
    href, why = site.video(report, suite, e.run_index, e.video, root)
    return {
        "state": state,
        "run_index": e.run_index,
        "seed": e.seed,
        "success": e.success,
        "steps": e.steps,
        "retries": e.retries,
        "video_href": href,
        "video_refused": why,
        "error": e.error,
        "failure_reason": e.failure_reason.value if e.failure_reason is not None else "",
    }


def _players(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded videos to embed on a task page, failures first (what a reader looks for), each once."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for e in sorted(episodes, key=lambda e: (e["success"], e["run_index"], e["state"])):
        href = e["video_href"]
        if href and href not in seen:
            seen.add(href)
            out.append(e)
    return out


def write_pages(
    reports: Sequence[CheckpointReport],
    out_dir: Path,
    *,
    files: EpisodeFiles | None = None,
    detail: Sequence[CheckpointReport] | None = None,
) -> tuple[dict[str, str], list[Path]]:
    """Write the pages of ``detail`` (default: every report) under ``out_dir/checkpoints``; ``reports``
    supply the previous checkpoints; ``files`` reads the episodes' videos (None: none is copied). Returns
    (checkpoint URI -> relative link, files written)."""
    site = _Site(out_dir, reports, files)
    chosen = reports if detail is None else detail
    for report in chosen:
        _write_checkpoint(site, report)
    links = {r.checkpoint_uri: f"checkpoints/{checkpoint_slug(r)}.html" for r in chosen}
    return links, site.written
