"""The rollout's videos: which episodes record, which keep their MP4, where it goes (locally or to S3).

The choice is :class:`eval_runner.video_selection.VideoSelector`'s (up to N per task, failures first, one per
failure reason). Perturbed episodes (robustness) get the same choice with a budget of their own, up to N more
per task, so they never take a standard episode's place; their files carry the axis and level
(``task00_init02_camera2.mp4``), so an episode and its twins never write the same file.
A recorded episode's frames stay in its worker until the episode ends; only a kept one is encoded and
written (next to the RunResult, ``<run>.videos/``), and a video displaced by a later failure is deleted
and its episode's ``video`` field cleared.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from dataclasses import replace
from pathlib import Path

from eval_runner.perturbations.draw import AxisLevel
from eval_runner.result_writer import ResultWriter
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import EpisodeTask
from eval_runner.vector import WorkerDied, WorkerHandle
from eval_runner.video_selection import VideoSelector
from rlinf_bench.contracts import EpisodeResult
from rlinf_bench.errors import RlinfBenchError

log = logging.getLogger(__name__)

__all__ = ["RolloutVideos"]


class RolloutVideos:
    """Decides per episode whether to record and keep its video, and writes the kept ones."""

    def __init__(self, per_task: int, video_dir: Path, writer: ResultWriter, builder: ResultBuilder) -> None:
        self.selector = VideoSelector(per_task)  # the standard episodes'
        self.perturbed = VideoSelector(per_task)  # the perturbed episodes', a budget of their own
        self.video_dir = video_dir
        self.writer = writer
        self.builder = builder
        for kept, selector in ((builder.episodes, self.selector), (builder.perturbed, self.perturbed)):
            for task_id, episodes in kept.items():  # a resumed run's videos stay as they are
                for e in episodes:
                    if e.video:
                        selector.seed(task_id, _result_key(e), e.success, e.failure_reason)

    def plan(self, ep: EpisodeTask) -> EpisodeTask:
        """``ep`` marked to record when its video could still be kept."""
        return replace(ep, record_video=self._selector(ep).wants(ep.task_id))

    def finish(self, w: WorkerHandle, ep: EpisodeTask, success: bool, reason: str | None = None) -> str | None:
        """The video of the recorded episode ``ep`` that just ended on ``w`` (``reason``: why it failed) if it is
        kept (written now)."""
        decision = self._selector(ep).offer(ep.task_id, _episode_key(ep), success, reason)
        if not decision.keep:
            return None
        video = self._save(w, ep)
        if decision.displaced is not None:
            self._drop(ep.task_id, decision.displaced, perturbed=ep.perturbation is not None)
        return video

    def _selector(self, ep: EpisodeTask) -> VideoSelector:
        return self.selector if ep.perturbation is None else self.perturbed

    def _save(self, w: WorkerHandle, ep: EpisodeTask) -> str | None:
        name = f"task{ep.task_id:02d}_init{ep.init_state:02d}"
        if ep.perturbation is not None:  # beside its twin's: task00_init02_camera2
            name += f"_{ep.perturbation.tag}"
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

    def _drop(self, task_id: int, key: Hashable, *, perturbed: bool) -> None:
        """Delete the displaced video and clear its episode's field (the next snapshot no longer lists it)."""
        episodes = (self.builder.perturbed if perturbed else self.builder.episodes).get(task_id, [])
        for i, e in enumerate(episodes):
            if _result_key(e) == key and e.video:
                try:
                    self.writer.remove(e.video)
                except (OSError, RlinfBenchError) as exc:  # an orphaned file is no reason to fail the run
                    log.warning("could not delete the displaced video %s: %s", e.video, exc)
                episodes[i] = e.model_copy(update={"video": None})
                return


def _episode_key(ep: EpisodeTask) -> Hashable:
    """An episode's key within its task: its initial state, with a perturbed one's axis and level."""
    return ep.init_state if ep.perturbation is None else (ep.init_state, ep.perturbation.tag)


def _result_key(e: EpisodeResult) -> Hashable:
    """The key of a finished episode (as :func:`_episode_key` gives it for the episode that played it)."""
    p = e.perturbation
    return e.init_state if p is None else (e.init_state, AxisLevel(p.axis, p.level).tag)
