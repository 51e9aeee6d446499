"""Privileged simulator state for the scripted expert (``builtin:expert``), read inside the worker.

A learned policy never sees this: only a policy whose ObservationSpec sets ``privileged`` gets it. The
state is the world-frame bounding boxes of the goal's object and of its target (an object, a fixture
or a region site), from the collision geoms as MuJoCo has placed them on this step, so the expert
needs no per-object tables: ``[obj_lo(3), obj_hi(3), target_lo(3), target_hi(3)]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlinf_bench.errors import PolicyError

STATE_DIM = 12


def privileged_state(env: Any) -> np.ndarray:
    """The goal object's and target's world AABBs for LIBERO env ``env`` (a ``ControlEnv.env``)."""
    goal = env.parsed_problem["goal_state"]
    if len(goal) != 1 or len(goal[0]) != 3 or goal[0][0].lower() not in ("on", "in"):
        raise PolicyError(f"the expert needs one On/In goal; task {env.bddl_file_name} has {goal!r}")
    _, obj, target = goal[0]
    obj_box = _body_box(env, obj)
    target_box = _body_box(env, target) if target in env.obj_body_id else _site_box(env, target)
    return np.concatenate([obj_box, target_box]).astype(np.float32)


def _body_box(env: Any, name: str) -> np.ndarray:
    model, data = env.sim.model._model, env.sim.data._data
    body = env.obj_body_id[name]
    # every body of the object: a fixture such as a cabinet is a tree of bodies
    bodies = {body} | {b for b in range(model.nbody) if _descends(model, b, body)}
    corners = []
    for g in range(model.ngeom):
        if model.geom_bodyid[g] not in bodies or model.geom_contype[g] == 0:
            continue  # visual-only geoms: their meshes overhang the collision shape
        centre, half = model.geom_aabb[g][:3], model.geom_aabb[g][3:]
        rot = data.geom_xmat[g].reshape(3, 3)
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
        corners.append(data.geom_xpos[g] + (centre + signs * half) @ rot.T)
    if not corners:
        pos = data.xpos[body]
        return np.concatenate([pos, pos])
    points = np.concatenate(corners)
    return np.concatenate([points.min(axis=0), points.max(axis=0)])


def _descends(model: Any, b: int, root: int) -> bool:
    while b > 0:
        b = int(model.body_parentid[b])
        if b == root:
            return True
    return False


def _site_box(env: Any, name: str) -> np.ndarray:
    model, data = env.sim.model._model, env.sim.data._data
    try:
        site = model.site(name).id
    except KeyError as exc:
        raise PolicyError(f"the expert cannot find target {name!r} (not an object, fixture or site)") from exc
    pos = data.site_xpos[site]
    half = np.abs(data.site_xmat[site].reshape(3, 3) @ model.site_size[site])
    half[2] = 0.0  # a region is a floor area: its "top" is where the object's bottom goes
    return np.concatenate([pos - half, pos + half])
