"""Video frames of a policy that reads no camera are drawn without MuJoCo's mirror pass, which only changes the
reflecting faces. (A policy's own images keep the pass: tests/sim/test_reference_fidelity.py compares them
with OpenVLA-OFT's loop bit for bit.)"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from eval_runner.env import VIDEO_CAMERA, LiberoEnv
from eval_runner.libero_setup import configure_libero
from eval_runner.policies.base import ObservationSpec
from rlinf_bench.suites import get_suite

pytestmark = pytest.mark.sim

REFLECTION = mujoco.mjtRndFlag.mjRND_REFLECTION


def test_given_a_policy_without_cameras_then_its_video_skips_the_mirror_pass_which_changes_only_reflections(
    libero_cache: Path,
) -> None:
    configure_libero(libero_cache)
    env = LiberoEnv(get_suite("libero_spatial").task(0), ObservationSpec(), horizon=10, video=True)
    try:
        env.start_episode(0, seed=0, settle_steps=2)
        env.step(np.zeros(7))
        frame = env.video_frame()
        context = env.sim._render_context_offscreen
        assert frame is not None and context.scn.flags[REFLECTION] == 0
        height, width = frame.shape[:2]

        def draw() -> np.ndarray:
            return np.asarray(env.sim.render(camera_name=VIDEO_CAMERA, width=width, height=height)[::-1, ::-1])

        drawn = draw()  # the last state as the video draws it ...
        context.scn.flags[REFLECTION] = 1
        mirrored = draw()  # ... and with the pass, as a policy's camera draws it
    finally:
        env.close()
    assert frame.std() > 0  # a real image
    changed = np.any(drawn != mirrored, axis=-1).mean()
    assert 0 < changed < 0.05  # the stove's reflecting base; the rest of the frame is the same
