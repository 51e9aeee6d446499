"""Real LIBERO rollouts of RLinf checkpoints through the ``rlinf:`` policy (rlinf's own model code, no weights downloaded).

The models are rlinf's ``mlp_policy`` and a custom chunking type registered with rlinf's
``register_model`` (tests/rlinf_fixtures.py), saved in RLinf's checkpoint layout. They read LIBERO's
8-d state only, so no camera is rendered and the tiny budgets run on two CPU cores.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("rlinf", reason="rlinf lives in .venv-rlinf (its antlr4 pin breaks moto here): make test-rlinf")

from eval_runner.loop import evaluate
from eval_runner.policies.base import Policy
from eval_runner.policies.factory import load_policy
from eval_runner.policies.rlinf_policy import RlinfPolicy
from rlinf_bench.contracts import RunResult, RunStatus
from tests import rlinf_fixtures as F
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


class Recorder(Policy):
    """Passes batches to an RlinfPolicy and keeps what it saw and answered, per episode."""

    def __init__(self, inner: RlinfPolicy) -> None:
        self.inner = inner
        self.obs_spec = inner.obs_spec
        self.batches: list[tuple[dict[str, Any], np.ndarray]] = []
        self.actions: dict[str, list[np.ndarray]] = defaultdict(list)

    def reset(self, episode_ids: list[str]) -> None:
        self.inner.reset(episode_ids)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        actions = self.inner.act(obs)
        self.batches.append(({k: list(v) if isinstance(v, list) else v.copy() for k, v in obs.items()}, actions.copy()))
        for episode_id, row in zip(obs["episode_id"], actions, strict=True):
            self.actions[episode_id].append(row)
        return actions

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


def _evaluate(
    tmp_path: Path, cache: Path, spec: str, checkpoint: Path | None, name: str, **run: Any
) -> tuple[RunResult, Recorder]:
    recorder = Recorder(load_policy(spec, checkpoint))  # type: ignore[arg-type]
    result = evaluate(
        make_run(policy=spec, **run), out_path=tmp_path / f"{name}.json", policy=recorder, settings=settings(cache)
    )
    assert result.status is RunStatus.COMPLETE
    return result, recorder


def _batch_of(rec: Recorder, episode_id: str, t: int) -> dict[str, Any]:
    """The observation (a one-row batch) that ``episode_id`` got its ``t``-th action for."""
    obs = [obs for obs, _ in rec.batches if episode_id in obs["episode_id"]][t]
    row = obs["episode_id"].index(episode_id)
    return {k: [v[row]] if isinstance(v, list) else v[row : row + 1] for k, v in obs.items()}


def _merge(batches: list[dict[str, Any]]) -> dict[str, Any]:
    """Stack one-row batches into one batch, as the loop does for workers stepping together."""
    merged: dict[str, Any] = {}
    for key, value in batches[0].items():
        parts = [b[key] for b in batches]
        merged[key] = [x for p in parts for x in p] if isinstance(value, list) else np.concatenate(parts)
    return merged


def _episodes(result: RunResult) -> list[tuple[int, int, bool]]:
    return [(e.init_state, e.steps, e.success) for t in result.tasks for e in t.episodes]


def test_given_an_rlinf_mlp_checkpoint_then_1_and_2_workers_act_identically_and_as_the_model_called_directly(
    tmp_path: Path, libero_cache: Path
) -> None:
    model = F.build(F.mlp_section(), seed=3)
    step = F.write_checkpoint(tmp_path / "exp", model, step=40)
    config = F.write_run_config(tmp_path / "exp" / "config.yaml", F.mlp_section())
    spec = f"rlinf:{config}"

    one, rec1 = _evaluate(tmp_path, libero_cache, spec, step, "w1", trials_per_task=2, workers=1, max_steps=20)
    two, rec2 = _evaluate(tmp_path, libero_cache, spec, step, "w2", trials_per_task=2, workers=2, max_steps=20)

    assert set(rec1.actions) == set(rec2.actions) == {"t0-s0-a0", "t0-s1-a0"}
    for episode_id in rec1.actions:
        np.testing.assert_array_equal(np.stack(rec1.actions[episode_id]), np.stack(rec2.actions[episode_id]))
    assert _episodes(one) == _episodes(two)
    # How many steps the two workers shared depends on when their scenes finished building; replaying the
    # single-worker observations as two-row batches shares every step, whatever the timing.
    lockstep = load_policy(spec, step)
    for t in range(len(rec1.actions["t0-s0-a0"])):
        batch = _merge([_batch_of(rec1, "t0-s0-a0", t), _batch_of(rec1, "t0-s1-a0", t)])
        np.testing.assert_array_equal(lockstep.act(batch), np.stack([rec1.actions[e][t] for e in batch["episode_id"]]))
    assert one.provenance.checkpoint_sha256 == rec1.inner.weights_sha256
    recorded = one.provenance.extra["policy"]
    assert recorded["model_type"] == "mlp_policy" and recorded["rlinf_version"] == one.provenance.packages["rlinf"]
    assert recorded["precision"] == "fp32" and recorded["greedy"] is True and recorded["chunk_size"] == 1
    assert (
        recorded["config_sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
        and recorded["greedy_override"] is None
    )

    # RLinf's own pipeline on the same observations: its LIBERO state (envs/libero/utils.py) into the model.
    from rlinf.envs.libero.utils import quat2axisangle

    for obs, actions in rec2.batches:
        states = [
            np.concatenate(
                [
                    obs["robot0_eef_pos"][i],
                    quat2axisangle(obs["robot0_eef_quat"][i].astype(np.float64)),
                    obs["robot0_gripper_qpos"][i],
                ]
            )
            for i in range(len(actions))
        ]
        padded = torch.zeros(16, 8)  # the policy's fixed forward-pass size; padding rows do not touch real rows
        padded[: len(states)] = torch.tensor(np.stack(states), dtype=torch.float32)
        direct, _ = model.predict_action_batch(env_obs={"states": padded}, mode="eval")
        np.testing.assert_array_equal(actions, direct[: len(states), 0, :].numpy())


def test_given_chunk_size_8_and_a_sampling_config_then_one_call_per_8_steps_greedy_and_worker_independent(
    tmp_path: Path, libero_cache: Path
) -> None:
    torch.manual_seed(5)
    model = F.build(F.chunk_section(8))
    config = F.write_run_config(tmp_path / "config.yaml", F.chunk_section(8), temperature_eval=1.6)
    weights = tmp_path / "full_weights.pt"
    torch.save(model.state_dict(), weights)
    spec = f"rlinf:{config}?plugins=tests.rlinf_fixtures&images=0&weights={weights}"

    one, rec1 = _evaluate(tmp_path, libero_cache, spec, None, "w1", trials_per_task=2, workers=1, max_steps=20)
    two, rec2 = _evaluate(tmp_path, libero_cache, spec, None, "w2", trials_per_task=2, workers=2, max_steps=20)

    for result, rec in ((one, rec1), (two, rec2)):
        steps = [e.steps for t in result.tasks for e in t.episodes]
        assert steps == [20, 20] and result.timings.env_steps == 40
        # counted: every episode's chunk was predicted once per 8 steps, and never more
        assert rec.inner.model_rows == sum(math.ceil(s / 8) for s in steps) == 6
        assert rec.inner.model.calls == rec.inner.model_calls <= 6
        assert result.provenance.extra["policy"]["greedy_override"]["config_value"] == 1.6
        assert result.provenance.extra["policy"]["chunk_size"] == 8
    # greedy: the model samples when asked to, yet both evaluations act identically
    for episode_id in rec1.actions:
        np.testing.assert_array_equal(np.stack(rec1.actions[episode_id]), np.stack(rec2.actions[episode_id]))


def test_given_an_episode_that_succeeds_mid_chunk_then_it_stops_at_once(tmp_path: Path, libero_cache: Path) -> None:
    config = F.write_run_config(tmp_path / "config.yaml", F.chunk_section(8))
    spec = f"rlinf:{config}?plugins=tests.rlinf_fixtures&images=0"
    recorder = Recorder(load_policy(spec, None))  # type: ignore[arg-type]
    # scale the model's actions to zero: the arm stays still while the hook's bowl lands on the plate
    with torch.no_grad():
        recorder.inner.model.net[2].weight.zero_()
        recorder.inner.model.net[2].bias.zero_()
    opts = settings(libero_cache, scene_hook="tests.sim.scene_hooks:place_bowl_on_plate", settle_steps=15)

    result = evaluate(make_run(policy=spec, max_steps=30), out_path=tmp_path / "r.json", policy=recorder, settings=opts)

    [episode] = result.tasks[0].episodes
    assert episode.success is True and episode.steps % 8 != 0  # ended inside a chunk
    assert result.timings.env_steps == episode.steps  # no step after success: the rest of the chunk was dropped
    assert recorder.inner.model_rows == math.ceil(episode.steps / 8)
