"""Fixtures for tests that run the real LIBERO simulator (CPU, Mesa EGL).

A run that several modules assert on is made once per session here: each worker a run starts costs about
5 s of CPU before its first observation, which is most of what this tier spends. The tests only read these
results; one that changes a result file works on its own copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_runner.loop import evaluate
from eval_runner.testing import FaultInjection
from rlinf_bench.errors import WorkerCrashError
from tests.sim.helpers import EXPERT_MAX_STEPS, CrashedRun, make_run, settings


@pytest.fixture(scope="session")
def libero_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One LIBERO config/cache folder for the whole session (configuring is idempotent)."""
    return tmp_path_factory.mktemp("libero-cache")


@pytest.fixture(scope="session")
def noisy_expert_run(tmp_path_factory: pytest.TempPathFactory, libero_cache: Path) -> Path:
    """The result file of ``builtin:expert`` at noise 1.5 on libero_spatial tasks 0 and 1, two initial states
    each: some episodes succeed, some fail (read by test_expert_policy and test_failure_reasons)."""
    out = tmp_path_factory.mktemp("noisy-expert") / "noisy.json"
    run = make_run(policy="builtin:expert?noise=1.5", task_ids=[0, 1], trials_per_task=2, max_steps=EXPERT_MAX_STEPS)
    evaluate(run, out_path=out, settings=settings(libero_cache))
    return out


@pytest.fixture(scope="session")
def always_crashing_run(tmp_path_factory: pytest.TempPathFactory, libero_cache: Path) -> CrashedRun:
    """libero_spatial task 0, two initial states; the worker dies at step 1 of state 1 every time (no marker),
    one retry allowed (read by test_worker_crash and test_resume)."""
    out = tmp_path_factory.mktemp("always-crashing") / "r.json"
    fault = FaultInjection(task_id=0, init_state=1, at_step=1)
    with pytest.raises(WorkerCrashError) as raised:
        evaluate(
            make_run(trials_per_task=2),
            out_path=out,
            settings=settings(libero_cache, fault_injection=fault, max_retries=1),
        )
    return CrashedRun(error=raised.value, result_json=out.read_bytes())
