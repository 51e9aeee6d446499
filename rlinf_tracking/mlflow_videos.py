"""The report's episode videos as MLflow artifacts of the checkpoint's parent run, and back.

Each recorded video goes under ``videos/<suite>/run<index>/``, named after the file the run recorded
(``task00_init03``, which says task and initial state) with the suffix of its content (``.mp4``), where the
MLflow UI's artifact view plays it. Videos are read through an
:class:`~rlinf_bench.reporting.episode_files.EpisodeFiles`, so each comes only from inside its own run's
folder, is no link, is a video by its bytes and is within the size bound
(:func:`rlinf_bench.named_files.read_named_file`); one that is refused or unreadable is skipped with a
warning: a missing video must not cost the publication.

:class:`MlflowRunFiles` reads them back for a report rebuilt from MLflow (``rlinf-bench report``), through the
same reader, from a download of the parent run's artifacts.
"""

from __future__ import annotations

import functools
import logging
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.errors import NamedFileRefusedError
from rlinf_bench.named_files import (
    NAMED_FILE_MAX_BYTES,
    VIDEO_TYPES,
    MediaType,
    NamedFile,
    RunFolder,
    is_portable_path,
    read_named_file,
)
from rlinf_bench.reporting.episode_files import EpisodeFiles, read_episode_video
from rlinf_bench.reporting.text_safety import plain
from rlinf_tracking.tracking_retry import RetryPolicy, call_tracking

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

__all__ = ["ARTIFACT_DIR", "MlflowRunFiles", "VideoArtifact", "artifact_folder", "report_videos", "stage_videos"]

ARTIFACT_DIR = "videos"


def artifact_folder(suite: str, run_index: int) -> str:
    """Where the videos of run ``run_index`` of ``suite`` go among the parent run's artifacts."""
    return f"{ARTIFACT_DIR}/{suite}/run{run_index}"


@dataclass(frozen=True)
class VideoArtifact:
    """One video of the report: which run recorded it, the URI it names and its artifact folder."""

    suite: str
    run_index: int
    uri: str

    @property
    def artifact_path(self) -> str:
        """The folder under the run's artifact root, e.g. videos/libero_spatial/run0."""
        return artifact_folder(self.suite, self.run_index)


def report_videos(report: CheckpointReport) -> list[VideoArtifact]:
    """Every distinct recorded video of the report, the perturbed episodes' included (their files carry the
    axis and level: ``task00_init03_camera2``), in suite, run, task, state order."""
    seen: set[tuple[str, int, str]] = set()
    out: list[VideoArtifact] = []
    for suite in report.suites:
        rows = [(e.run_index, s.task_id, s.init_state, e.video) for s in suite.states for e in s.episodes]
        perturbed = suite.robustness.states if suite.robustness is not None else []
        rows += [(v.run_index, o.task_id, o.init_state, v.video) for o in perturbed for v in o.videos]
        for run_index, _, _, video in sorted(rows, key=lambda r: r[:3]):
            if not video or (suite.suite, run_index, video) in seen:
                continue
            seen.add((suite.suite, run_index, video))
            out.append(VideoArtifact(suite.suite, run_index, video))
    return out


def _artifact_name(got: NamedFile) -> str:
    return f"{got.stem}{got.media_type.suffix}"


def stage_videos(report: CheckpointReport, folder: Path, files: EpisodeFiles) -> list[tuple[Path, str]]:
    """Copy the report's videos under ``folder``; returns (local file, artifact folder) per video read."""
    staged: list[tuple[Path, str]] = []
    for v in report_videos(report):
        if not is_portable_path(v.suite):  # the suite becomes a folder of the staging area and of the artifacts
            log.warning(
                "video %s not published to MLflow: suite %r is no plain folder name", plain(v.uri), plain(v.suite)
            )
            continue
        got = read_episode_video(files, report, v.suite, v.run_index, v.uri)
        if isinstance(got, str):
            continue  # logged with its reason
        target = folder / v.artifact_path / _artifact_name(got)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(got.data)
        staged.append((target, v.artifact_path))
    return staged


class MlflowRunFiles:
    """Episode videos of reports read back from MLflow, restored from their parent run's artifacts.

    A video is looked up under ``videos/<suite>/run<index>/`` of the run in ``report.links["mlflow_run"]`` by
    the stem of the file the run recorded, downloaded under ``workdir`` and read through
    :func:`~rlinf_bench.named_files.read_named_file` from inside that download (no link, a video by content,
    within the bound).
    """

    def __init__(
        self,
        client: MlflowClient,
        workdir: Path,
        *,
        retry: RetryPolicy | None = None,
        max_bytes: int = NAMED_FILE_MAX_BYTES,
    ) -> None:
        self.client = client
        self.workdir = workdir
        self.retry = retry or RetryPolicy()
        self.max_bytes = max_bytes
        self._listings: dict[tuple[str, str], dict[str, Any]] = {}

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        return call_tracking(
            functools.partial(fn, *args), what=what, target=str(self.client.tracking_uri), policy=self.retry
        )

    def _listing(self, run_id: str, folder: str) -> dict[str, Any]:
        key = (run_id, folder)
        if key not in self._listings:
            found = self._call(f"list {folder} of run {run_id}", self.client.list_artifacts, run_id, folder)
            self._listings[key] = {posixpath.basename(f.path): f for f in found if not f.is_dir}
        return self._listings[key]

    def video(self, report: CheckpointReport, suite: str, run_index: int, name: str) -> NamedFile:
        run_id = report.links.get("mlflow_run", "")
        if not is_portable_path(run_id):
            raise NamedFileRefusedError(f"{plain(report.checkpoint_uri)} names no MLflow run to restore videos from")
        base = posixpath.basename(name)
        if not (is_portable_path(suite) and is_portable_path(base)):
            raise NamedFileRefusedError(f"{plain(suite)} run {run_index}: {plain(name)!r} is no plain video name")
        folder = artifact_folder(suite, run_index)
        listing = self._listing(run_id, folder)
        stem = posixpath.splitext(base)[0]
        candidates = [base, *(f"{stem}{t.suffix}" for t in sorted(MediaType))]
        found = next((listing[c] for c in candidates if c in listing), None)
        if found is None:
            raise NamedFileRefusedError(f"{plain(base)!r} is not among the videos of MLflow run {run_id} ({folder})")
        if found.file_size is not None and found.file_size > self.max_bytes:
            raise NamedFileRefusedError(f"{found.path} of MLflow run {run_id} is over {self.max_bytes} bytes")
        # One download folder per run and artifact folder: MLflow puts a file artifact right in it.
        root = self.workdir / run_id / folder
        root.mkdir(parents=True, exist_ok=True)
        local = self._call(f"download {found.path}", self.client.download_artifacts, run_id, found.path, str(root))
        return read_named_file(str(local), RunFolder.of(str(root)), accept=VIDEO_TYPES, max_bytes=self.max_bytes)
