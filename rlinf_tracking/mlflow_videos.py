"""The report's episode videos as MLflow artifacts of the checkpoint's parent run.

Each recorded MP4 goes under ``videos/<suite>/run<index>/`` (its file name says task and initial state,
e.g. ``task00_init03.mp4``), where the MLflow UI's artifact view plays it. Videos are read through a
reader (local files, or the results store for ``s3://`` URIs); one that cannot be read is skipped with a
warning: a missing video must not cost the publication.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rlinf_bench.contracts import CheckpointReport

log = logging.getLogger(__name__)

__all__ = ["ARTIFACT_DIR", "VideoArtifact", "local_videos", "report_videos", "stage_videos"]

ARTIFACT_DIR = "videos"
#: What a video may be: a RunResult's ``video`` field is data, and must not make the publisher upload any file it names.
VIDEO_SUFFIXES = frozenset({".mp4", ".gif"})  # .gif: videos recorded before MP4

#: Reads a video by URI (local path or s3://); raises or returns None when it cannot be had.
VideoReader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class VideoArtifact:
    """One video of the report: where it was recorded and where it goes in the run's artifacts."""

    uri: str
    artifact_path: str  # folder under the run's artifact root, e.g. videos/libero_spatial/run0
    name: str


def report_videos(report: CheckpointReport) -> list[VideoArtifact]:
    """Every distinct recorded video of the report, in suite, run, task, state order."""
    seen: set[str] = set()
    out: list[VideoArtifact] = []
    for suite in report.suites:
        rows = [(e.run_index, s.task_id, s.init_state, e.video) for s in suite.states for e in s.episodes]
        for run_index, _, _, video in sorted(rows, key=lambda r: r[:3]):
            if not video or video in seen:
                continue
            if PurePosixPath(video).suffix.lower() not in VIDEO_SUFFIXES:
                log.warning("%s is not a video (.mp4, .gif): not published to MLflow", video)
                continue
            seen.add(video)
            folder = f"{ARTIFACT_DIR}/{suite.suite}/run{run_index}"
            out.append(VideoArtifact(video, folder, PurePosixPath(video).name))
    return out


def local_videos(report: CheckpointReport) -> list[tuple[Path, str]]:
    """The report's videos that are local files, as (file, artifact folder): published without a copy."""
    found = [(Path(v.uri), v.artifact_path) for v in report_videos(report) if "://" not in v.uri]
    for path, _ in found:
        if not path.is_file():
            log.warning("video %s not published to MLflow: not found", path)
    return [(path, folder) for path, folder in found if path.is_file()]


def _local(uri: str) -> bytes | None:
    path = Path(uri)
    return path.read_bytes() if path.is_file() else None


def stage_videos(report: CheckpointReport, folder: Path, read: VideoReader | None = None) -> list[tuple[Path, str]]:
    """Copy the report's videos under ``folder``; returns (local file, artifact folder) per video read."""
    reader = read or _local
    staged: list[tuple[Path, str]] = []
    for v in report_videos(report):
        try:
            data = reader(v.uri)
        except Exception as exc:  # a missing or unreadable video must not break the publication
            log.warning("video %s not published to MLflow: %s", v.uri, exc)
            continue
        if data is None:
            log.warning("video %s not published to MLflow: not found", v.uri)
            continue
        target = folder / v.artifact_path / v.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        staged.append((target, v.artifact_path))
    return staged
