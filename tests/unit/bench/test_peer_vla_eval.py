"""The vla-eval side of the peer benchmark: the same work as our suite run, the observations mapped, the tally."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bench import peer_vla_eval
from bench.llama_policy import make_policy
from bench.vla_eval_adapter import policy_options, stand_in_inputs


def _observation(value: int, text: str) -> dict[str, object]:
    image = np.full((8, 8, 3), value, np.uint8)
    wrist = np.full((8, 8, 3), value + 1, np.uint8)
    states = np.arange(8, dtype=np.float32) + value
    return {"images": {"agentview": image, "wrist": wrist}, "states": states, "task_description": text}


def test_given_vla_eval_observations_then_the_stand_in_gets_both_cameras_and_its_proprio_layout() -> None:
    inputs = stand_in_inputs([_observation(3, "pick the bowl"), _observation(7, "place it")])

    assert inputs["agentview_image"].shape == (2, 8, 8, 3)
    assert inputs["agentview_image"][1, 0, 0, 0] == 7
    assert inputs["robot0_eye_in_hand_image"][0, 0, 0, 0] == 4  # the wrist camera, not the agent view again
    assert inputs["robot0_eef_pos"].tolist()[0] == [3.0, 4.0, 5.0]
    assert inputs["robot0_eef_quat"].shape == (2, 4)  # axis-angle plus a zero: the quaternion's width
    assert inputs["robot0_gripper_qpos"].tolist()[1] == [13.0, 14.0]
    assert inputs["task_description"] == ["pick the bowl", "place it"]


def test_the_adapters_policy_args_reach_make_policy_as_numbers_and_names() -> None:
    options = policy_options("layers=1,action_scale=0.5,device=cpu,backbone=lean-compiled")

    # the same stand-in on both sides of the pair: our side takes backbone= too (bench/peer_lease.sh BACKBONE)
    assert options == {"layers": 1, "action_scale": 0.5, "device": "cpu", "backbone": "lean-compiled"}
    assert policy_options("") == {}


def test_given_mapped_observations_then_the_stand_in_returns_a_chunk_per_row() -> None:
    # the lean backbone: the mapping under test is the backbone's inputs, and transformers takes seconds to import
    policy = make_policy(layers=1, hidden=32, intermediate=64, heads=2, resolution=16, device="cpu", backbone="lean")
    image = np.zeros((16, 16, 3), np.uint8)
    observations = [{"images": {"agentview": image, "wrist": image}, "states": np.zeros(8), "task_description": "x"}]

    actions = policy.infer(stand_in_inputs(observations * 3))

    assert actions.shape == (3, policy.chunk, 7)
    assert set(np.unique(actions[..., -1])) <= {-1.0, 1.0}  # LIBERO's binary gripper, as vla-eval expects


def test_given_our_suite_settings_then_vla_eval_runs_the_same_tasks_states_and_horizon(tmp_path: Path) -> None:
    args = argparse.Namespace(suite="libero_spatial", trials=25, max_steps=0, max_tasks=0, request_timeout=600.0)

    config = peer_vla_eval.eval_config(args, "ws://127.0.0.1:1", tmp_path)

    (bench,) = config["benchmarks"]
    assert bench["episodes_per_task"] == 25  # initial states 0..24 of every task, as our --trials 25
    assert bench["max_steps"] == 220  # the OFT horizon our suite run uses
    assert bench["params"]["num_steps_wait"] == 10  # our settle steps
    assert "max_tasks" not in bench  # all ten tasks


def test_given_shard_results_then_every_episode_and_error_is_counted(tmp_path: Path) -> None:
    shard = [
        {
            "num_errors": 1,
            "tasks": [
                {
                    "episodes": [
                        {"steps": 220, "metrics": {"success": False}},
                        {"steps": 90, "metrics": {"success": True}},
                    ]
                },
                {"episodes": [{"steps": 5, "failure_reason": "env_start", "metrics": {}}]},
            ],
        }
    ]
    (tmp_path / "a.json").write_text(json.dumps(shard))
    (tmp_path / "b.json").write_text(json.dumps([{"num_errors": 0, "tasks": []}]))

    counts = peer_vla_eval.tally([tmp_path / "a.json", tmp_path / "b.json"])

    assert counts == {"episodes": 3, "successes": 1, "errors": 1, "policy_steps": 315}
