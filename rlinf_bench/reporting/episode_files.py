"""Where a report's episode videos are read from, each only from inside its own run's folder.

A report names its videos by the URIs the eval Jobs wrote (``StateEpisode.video``). Every reader of them
(the site's pages, the embedded default's report folder, the MLflow upload, ``rlinf-bench report``) goes
through an :class:`EpisodeFiles`, and every implementation reads through
:func:`rlinf_bench.named_files.read_named_file`:

- :class:`StoredRunFiles` reads them where the runs stored them (a local folder or S3): the run's folder is
  ``<results root>/<suite>`` when the reader knows the results root (the workflow's states, from the
  request), otherwise the folder of the RunResult the run was read from (``RunSummary.source``);
- ``rlinf_tracking.mlflow_videos.MlflowRunFiles`` reads the copies published as MLflow artifacts.
"""

from __future__ import annotations

import logging
import posixpath
from typing import Protocol

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.layout import join_uri
from rlinf_bench.document_store import Storage, is_s3
from rlinf_bench.errors import NamedFileRefusedError
from rlinf_bench.named_files import NAMED_FILE_MAX_BYTES, VIDEO_TYPES, NamedFile, RunFolder, read_named_file
from rlinf_bench.reporting.text_safety import plain

__all__ = ["EpisodeFiles", "StoredRunFiles", "read_episode_video"]

log = logging.getLogger(__name__)


class EpisodeFiles(Protocol):
    """Reads the video an episode of ``report`` names; raises NamedFileRefusedError saying why it did not."""

    def video(self, report: CheckpointReport, suite: str, run_index: int, name: str) -> NamedFile: ...


def _folder_of(source: str) -> str:
    """The folder of a RunResult's file or URI (``run0.json`` in the working folder: ``.``)."""
    if is_s3(source):
        return source.rsplit("/", 1)[0]
    return posixpath.dirname(source) or "."


class StoredRunFiles:
    """Episode videos read where the runs stored them, from inside each run's own folder.

    ``storage`` reads ``s3://`` videos (None: local files only, an S3 video is refused). ``results_root``
    is the checkpoint's results root the caller trusts (the request's): a run's folder is then
    ``<results_root>/<suite>``. Without it a run's folder is the one its RunResult was read from, which must
    lie inside ``within`` when given (the results prefix of a stack whose reports are read back).
    """

    def __init__(
        self,
        storage: Storage | None = None,
        *,
        results_root: str | None = None,
        within: str | None = None,
        max_bytes: int = NAMED_FILE_MAX_BYTES,
    ) -> None:
        self.storage = storage
        self.results_root = results_root
        self.within = within
        self.max_bytes = max_bytes

    def folder(self, report: CheckpointReport, suite: str, run_index: int) -> RunFolder:
        """The folder run ``run_index`` of ``suite`` may name files in; refused when it is not known."""
        if self.results_root is not None:
            return RunFolder.of(join_uri(self.results_root, suite), self.results_root)
        summary = next((s for s in report.suites if s.suite == suite), None)
        run = next((r for r in summary.runs if r.run_index == run_index), None) if summary else None
        if run is None or not run.source:
            raise NamedFileRefusedError(
                f"{plain(suite)} run {run_index}: the report does not say which result file the run was read "
                "from, so no file it names can be placed inside the run's folder"
            )
        return RunFolder.of(_folder_of(run.source), self.within)

    def video(self, report: CheckpointReport, suite: str, run_index: int, name: str) -> NamedFile:
        where = self.folder(report, suite, run_index)
        return read_named_file(name, where, storage=self.storage, accept=VIDEO_TYPES, max_bytes=self.max_bytes)


def read_episode_video(
    files: EpisodeFiles, report: CheckpointReport, suite: str, run_index: int, name: str
) -> NamedFile | str:
    """The video, or why it was not read (logged once here, escaped); never raises for a refused or failed read."""
    try:
        return files.video(report, suite, run_index, name)
    except NamedFileRefusedError as exc:
        why = str(exc)
    except Exception as exc:  # an unreadable video must never cost the report
        why = f"{type(exc).__name__}: {exc}"
    log.warning("%s run %d: no video: %s", plain(suite), run_index, plain(why))
    return why
