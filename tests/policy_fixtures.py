"""Observation batches and demo checkpoints for policy tests (no simulator), shared by unit and integration tests."""

from __future__ import annotations

from typing import Any

import numpy as np


def make_obs(batch: int, *, cameras: tuple[str, ...] = (), resolution: int = 32, seed: int = 0) -> dict[str, Any]:
    """An observation batch in the format of eval_runner.policies.base, with plausible LIBERO values."""
    rng = np.random.default_rng(seed)
    obs: dict[str, Any] = {
        "robot0_eef_pos": (rng.normal(size=(batch, 3)) * 0.1 + [-0.1, 0.0, 1.0]).astype(np.float32),
        "robot0_eef_quat": rng.normal(size=(batch, 4)).astype(np.float32),
        "robot0_gripper_qpos": (rng.normal(size=(batch, 2)) * 0.01).astype(np.float32),
        "task_description": ["put the bowl on the plate"] * batch,
        "episode_id": [f"task0-trial{i}" for i in range(batch)],
    }
    for camera in cameras:
        obs[f"{camera}_image"] = rng.integers(0, 256, size=(batch, resolution, resolution, 3), dtype=np.uint8)
    return obs
