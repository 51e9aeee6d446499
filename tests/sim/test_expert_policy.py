"""builtin:expert in the real simulator: it succeeds at noise 0, fails more with noise, and its episodes do not
depend on the worker count. A small budget: LIBERO-Spatial and LIBERO-Object, a few states, one worker where the
worker count is not what a test checks (an episode is the same with any: the last test here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.expert_state import MAX_OBSTACLES
from eval_runner.loop import evaluate
from eval_runner.policies.factory import load_policy
from rlinf_bench.contracts import RunResult
from rlinf_bench.errors import PolicyError
from tests.sim.helpers import EXPERT_MAX_STEPS, RecordingPolicy, make_run, settings

pytestmark = pytest.mark.sim


def _run(out_dir: Path, cache: Path, name: str, **fields: Any) -> RunResult:
    run = make_run(max_steps=EXPERT_MAX_STEPS, **fields)
    return evaluate(run, out_path=out_dir / f"{name}.json", settings=settings(cache))


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory, libero_cache: Path) -> RunResult:
    """builtin:expert without noise on libero_spatial tasks 0 and 2, two initial states each."""
    out_dir = tmp_path_factory.mktemp("clean-expert")
    return _run(out_dir, libero_cache, "clean", policy="builtin:expert", task_ids=[0, 2], trials_per_task=2)


def _successes(result: RunResult, task_id: int) -> int:
    [task] = [t for t in result.tasks if t.task_id == task_id]
    return task.successes


def test_given_no_noise_then_the_expert_places_the_bowl_on_the_plate(clean_run: RunResult) -> None:
    assert clean_run.successes == 4, [(t.task_id, [e.success for e in t.episodes]) for t in clean_run.tasks]
    assert clean_run.provenance.extra["policy"]["kind"].startswith("scripted expert")


def test_given_more_noise_then_success_falls_monotonically_on_fixed_states(
    tmp_path: Path, libero_cache: Path, clean_run: RunResult, noisy_expert_run: Path
) -> None:
    # task 0's two initial states at noise 0 (the clean run), 0.5 (run here) and 1.5 (the session's noisy run)
    half = _run(tmp_path, libero_cache, "n0.5", policy="builtin:expert?noise=0.5", task_ids=[0], trials_per_task=2)
    noisy = RunResult.load(noisy_expert_run)
    assert noisy.policy == "builtin:expert?noise=1.5" and noisy.max_steps == half.max_steps == clean_run.max_steps
    successes = [_successes(r, 0) for r in (clean_run, half, noisy)]
    assert successes[0] >= successes[1] >= successes[2] and successes[0] > successes[2], successes


class Recording(RecordingPolicy):
    """Keeps every privileged state and action row the expert saw and gave, per episode."""

    def act(self, obs: dict[str, Any]) -> Any:
        actions = self.inner.act(obs)
        for i, episode_id in enumerate(obs["episode_id"]):
            self.seen[episode_id].append(np.concatenate([obs["privileged_state"][i], actions[i]]))
        return actions


def test_given_no_noise_then_the_expert_puts_grocery_items_in_the_basket(tmp_path: Path, libero_cache: Path) -> None:
    # the soup can must be carried over the basket's rim; the cream cheese is grasped off its middle, since a
    # centred hand would come down on the tomato sauce beside it
    policy = Recording(load_policy("builtin:expert", None))
    run = make_run(suite="libero_object", policy="builtin:expert", task_ids=[0, 1], trials_per_task=1, max_steps=280)
    result = evaluate(run, out_path=tmp_path / "object.json", policy=policy, settings=settings(libero_cache))
    assert result.successes == 2, [(t.task_id, [e.steps for e in t.episodes]) for t in result.tasks]
    first = policy.seen["t0-s0-a0"][0]
    basket_top, inside, obstacles = first[11], first[12], first[13]
    assert inside == 1.0 and basket_top > 0.13  # an In goal: the basket's rim, not its region's middle
    assert obstacles == 6 <= MAX_OBSTACLES  # the scene's other five groceries and the basket


def test_given_noise_when_run_with_one_or_two_workers_then_trajectories_are_identical(
    tmp_path: Path, libero_cache: Path
) -> None:
    spec = "builtin:expert?noise=0.5&hesitate=0.2&seed=1"
    recorded = []
    for workers in (1, 2):
        policy = Recording(load_policy(spec, None))
        run = make_run(policy=spec, trials_per_task=2, max_steps=40, workers=workers)
        evaluate(run, out_path=tmp_path / f"w{workers}.json", policy=policy, settings=settings(libero_cache))
        recorded.append({k: np.stack(v) for k, v in policy.seen.items()})
    one, two = recorded
    assert sorted(one) == sorted(two) == ["t0-s0-a0", "t0-s1-a0"]
    for episode_id in one:
        assert np.array_equal(one[episode_id], two[episode_id]), episode_id


def test_given_a_task_without_an_on_or_in_goal_then_refused_before_any_worker_starts(
    tmp_path: Path, libero_cache: Path
) -> None:
    run = make_run(suite="libero_goal", policy="builtin:expert", task_ids=[0])  # open the middle drawer
    with pytest.raises(PolicyError, match=r"\(open wooden_cabinet_1_middle_region\)"):
        evaluate(run, out_path=tmp_path / "goal.json", settings=settings(libero_cache))
