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


def expert_to_the_other_bowl(env: LiberoEnv) -> None:
    """Send ``builtin:expert`` to the scene's other bowl: its privileged state names akita_black_bowl_2's box in
    place of the goal's bowl (the target, the plate, stays), so it carries the wrong bowl to the plate."""
    if "_goal_observation" in env.__dict__:
        return  # wrapped at an earlier episode of this scene
    goal_observation = env.__dict__["_goal_observation"] = env.observation
    scene = env.raw_env.env

    def observation(raw: dict[str, object]) -> dict[str, object]:
        obs = goal_observation(raw)
        state = np.array(obs["privileged_state"], copy=True)
        state[0:6] = _collision_box(scene, "akita_black_bowl_2")
        obs["privileged_state"] = state
        return obs

    env.observation = observation  # type: ignore[method-assign]


def _collision_box(scene: object, name: str) -> np.ndarray:
    """World bounding box ``[lo(3), hi(3)]`` of an object's collision geoms, as the expert's state gives it."""
    model, data = scene.sim.model._model, scene.sim.data._data  # type: ignore[attr-defined]
    body = scene.obj_body_id[name]  # type: ignore[attr-defined]
    geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and model.geom_contype[g] != 0]
    rot = data.geom_xmat[geoms].reshape(-1, 3, 3)
    centres = data.geom_xpos[geoms] + np.einsum("nij,nj->ni", rot, model.geom_aabb[geoms, :3])
    half = np.einsum("nij,nj->ni", np.abs(rot), model.geom_aabb[geoms, 3:])
    return np.concatenate([(centres - half).min(axis=0), (centres + half).max(axis=0)]).astype(np.float32)
