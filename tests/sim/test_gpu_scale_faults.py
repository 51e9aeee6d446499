"""Faults of a GPU-scale run, on the real simulator: a policy server that stops answering, an EGL that fails."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.loop import evaluate
from eval_runner.policies.base import SETTLE_ACTION, ObservationSpec, Policy
from eval_runner.policies.remote import ServerPolicy
from eval_runner.policies.server import PolicyServer
from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.errors import PolicyServerUnreachableError, RenderingError
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


class GoesSilent(Policy):
    """Answers ``answers`` batches, then never returns (a wedged GPU server), until ``wake`` is set."""

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def __init__(self, answers: int) -> None:
        self.answers = answers
        self.calls = 0
        self.wake = threading.Event()

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        self.calls += 1
        if self.calls > self.answers:
            self.wake.wait()
        return np.tile(np.asarray(SETTLE_ACTION), (len(obs["episode_id"]), 1))


def test_given_a_policy_server_that_stops_answering_then_the_run_is_incomplete_and_resume_finishes_it(
    tmp_path: Path, libero_cache: Path
) -> None:
    out = tmp_path / "r.json"
    run = make_run(policy="server:ws://policy", trials_per_task=3, max_steps=5)
    silent = GoesSilent(answers=7)  # episode 0 (5 steps) finishes, episode 1 stops mid-way
    with PolicyServer(silent, port=0) as server:
        client = ServerPolicy(server.url, retries=1, backoff_s=0.01, request_timeout_s=2.0)
        with pytest.raises(PolicyServerUnreachableError, match=r"did not answer a batch within 2\.0s"):
            evaluate(run, out_path=out, policy=client, settings=settings(libero_cache))
        silent.wake.set()
    first = RunResult.load(out)
    assert first.status is RunStatus.INCOMPLETE and "--resume" in (first.error or "")
    assert [e.init_state for e in first.tasks[0].episodes] == [0]

    with PolicyServer(GoesSilent(answers=10**6), port=0) as healthy:
        client = ServerPolicy(healthy.url, retries=1, backoff_s=0.01)
        resumed = evaluate(run, out_path=out, policy=client, settings=settings(libero_cache, resume=True))

    assert resumed.status is RunStatus.COMPLETE and resumed.episodes == 3
    assert resumed.tasks[0].episodes[0] == first.tasks[0].episodes[0]  # kept, not re-run
    assert resumed.timings.env_steps == 10  # only initial states 1 and 2 ran


def test_given_an_egl_device_that_does_not_exist_then_the_run_fails_naming_it_after_one_restart(
    tmp_path: Path, libero_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUJOCO_EGL_DEVICE_ID", "99")  # a real EGL failure: robosuite finds no such device
    out = tmp_path / "r.json"
    run = make_run(policy="builtin:zero?cameras=agentview&resolution=32", trials_per_task=1, max_steps=3)

    with pytest.raises(RenderingError, match=r"failed to render again after a restart: .*EGL device 99"):
        evaluate(run, out_path=out, settings=settings(libero_cache))

    failed = RunResult.load(out)
    assert failed.status is RunStatus.FAILED and "EGL device 99" in (failed.error or "")
    assert failed.provenance.extra["worker_restarts"] == 1
