"""Scene hooks for simulator tests: change a LIBERO scene through MuJoCo, inside the env worker.

They are loaded by name (``tests.sim.scene_hooks:...``) through ``EvalSettings.scene_hook``, which is
test-only.
"""

from __future__ import annotations

import numpy as np

from eval_runner.env import LiberoEnv

# libero_spatial task 0: "pick up the black bowl between the plate and the ramekin and place it on the plate";
# its BDDL goal is (On akita_black_bowl_1 plate_1).
BOWL = "akita_black_bowl_1"
PLATE = "plate_1"


def place_bowl_on_plate(env: LiberoEnv) -> None:
    """Put the task's bowl 3 cm above the plate's centre, upright; gravity does the rest."""
    scene = env.raw_env.env
    bowl = scene.objects_dict[BOWL]
    plate = scene.objects_dict[PLATE]
    sim = env.sim
    plate_pos = sim.data.body_xpos[sim.model.body_name2id(plate.root_body)].copy()
    sim.data.set_joint_qpos(bowl.joints[-1], np.concatenate([plate_pos + np.array([0.0, 0.0, 0.03]), [1, 0, 0, 0]]))
    sim.forward()


def raise_on_second_step(env: LiberoEnv) -> None:
    """Make the episode's second policy step raise inside the simulator, as a MuJoCo instability would."""
    original = env.__dict__.setdefault("_unwrapped_step", env.raw_env.step)
    calls = {"n": 0}

    def step(action: np.ndarray) -> object:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("MuJoCo simulation became unstable (test hook)")
        return original(action)

    env.raw_env.step = step
