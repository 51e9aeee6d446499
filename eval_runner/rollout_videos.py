"""The rollout's videos: which episodes record, which keep their MP4, where it goes (locally or to S3).

The choice is :class:`eval_runner.video_selection.VideoSelector`'s (up to N per task, failures first, one per
failure reason).
A recorded episode's frames stay in its worker until the episode ends; only a kept one is encoded and
written (next to the RunResult, ``<run>.videos/``), and a video displaced by a later failure is deleted
and its episode's ``video`` field cleared.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from eval_runner.result_writer import ResultWriter
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import EpisodeTask
from eval_runner.vector import WorkerDied, WorkerHandle
from eval_runner.video_selection import VideoSelector
from rlinf_bench.errors import RlinfBenchError

log = logging.getLogger(__name__)

__all__ = ["RolloutVideos"]


class RolloutVideos:
    """Decides per episode whether to record and keep its video, and writes the kept ones."""

    def __init__(self, per_task: int, video_dir: Path, writer: ResultWriter, builder: ResultBuilder) -> None:
        self.selector = VideoSelector(per_task)
        self.video_dir = video_dir
        self.writer = writer
        self.builder = builder
        for task_id, episodes in builder.episodes.items():  # a resumed run's videos stay as they are
            for e in episodes:
                if e.video:
                    self.selector.seed(task_id, e.init_state, e.success, e.failure_reason)

    def plan(self, ep: EpisodeTask) -> EpisodeTask:
        """``ep`` marked to record when its video could still be kept."""
        return replace(ep, record_video=self.selector.wants(ep.task_id))

    def finish(self, w: WorkerHandle, ep: EpisodeTask, success: bool, reason: str | None = None) -> str | None:
        """The video of the recorded episode ``ep`` that just ended on ``w`` (``reason``: why it failed) if it is
        kept (written now)."""
        decision = self.selector.offer(ep.task_id, ep.init_state, success, reason)
        if not decision.keep:
            return None
        video = self._save(w, ep)
        if decision.displaced is not None:
            self._drop(ep.task_id, decision.displaced)
        return video

    def _save(self, w: WorkerHandle, ep: EpisodeTask) -> str | None:
        name = f"task{ep.task_id:02d}_init{ep.init_state:02d}"
        try:
            w.send(("video", str(self.video_dir / name)))
            _, local = w.recv()
        except WorkerDied as exc:
            # the episode's outcome is already known: a lost video must not cost the run
            self._error(ep, exc)
            w.restart()
            self.builder.counters.worker_restarts += 1
            return None
        except RlinfBenchError as exc:
            self._error(ep, exc)
            return None
        if self.writer.is_s3:
            uri = self.writer.upload(Path(local), self.writer.sibling(f"{self._folder()}/{Path(local).name}"))
            Path(local).unlink(missing_ok=True)  # the local copy was a staging file: disk stays bounded
            return uri
        return str(local)

    def _folder(self) -> str:
        # one folder per run (run0.videos/, as locally): the runs of a suite share the result's folder
        return f"{Path(self.writer.key).stem}.videos"

    def _error(self, ep: EpisodeTask, exc: Exception) -> None:
        log.error("video of %s not written: %s", ep.episode_id, exc)
        self.builder.provenance.extra.setdefault("video_errors", []).append(f"{ep.episode_id}: {exc}")

    def _drop(self, task_id: int, init_state: int) -> None:
        """Delete the displaced video and clear its episode's field (the next snapshot no longer lists it)."""
        episodes = self.builder.episodes.get(task_id, [])
        for i, e in enumerate(episodes):
            if e.init_state == init_state and e.video:
                try:
                    self.writer.remove(e.video)
                except (OSError, RlinfBenchError) as exc:  # an orphaned file is no reason to fail the run
                    log.warning("could not delete the displaced video %s: %s", e.video, exc)
                episodes[i] = e.model_copy(update={"video": None})
                return
