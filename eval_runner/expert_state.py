"""Privileged simulator state for the scripted expert (``builtin:expert``), read inside the worker.

A learned policy never sees this: only a policy whose ObservationSpec sets ``privileged`` gets it. The
state is world-frame bounding boxes from the collision geoms as MuJoCo has placed them on this step, so
the expert needs no per-object tables. One flat ``float32`` row of :data:`STATE_DIM` values:

- ``[0:6]`` the goal's object: ``lo(3), hi(3)``;
- ``[6:12]`` its target: an object or fixture (its box), or a region site. An ``On`` region is a floor
  area (its top is its centre); an ``In`` region is a volume whose bottom is the region's and whose top is
  the highest of the region's and its owner's (a basket's rim stands above the region it contains);
- ``[12]`` 1.0 for an ``In`` goal (lower the object into the target), 0.0 for ``On`` (set it on top);
- ``[13]`` how many obstacle rows follow (at most :data:`MAX_OBSTACLES`);
- ``[14:]`` the boxes of every other object and fixture of the scene (the table or floor is none), the
  nearest to the goal's object first, then zeros: what the hand must not land on or sweep through.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlinf_bench.errors import PolicyError

#: Obstacles kept, nearest first (LIBERO's scenes hold at most a dozen objects and fixtures).
MAX_OBSTACLES = 16
STATE_DIM = 14 + 6 * MAX_OBSTACLES
_SIGNS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)


def privileged_state(env: Any) -> np.ndarray:
    """The expert's state row (see the module docstring) for LIBERO env ``env`` (a ``ControlEnv.env``)."""
    goal = env.parsed_problem["goal_state"]
    if len(goal) != 1 or len(goal[0]) != 3 or goal[0][0].lower() not in ("on", "in"):
        raise PolicyError(f"the expert needs one On/In goal; task {env.bddl_file_name} has {goal!r}")
    predicate, obj, target = goal[0]
    inside = predicate.lower() == "in"
    boxes = _BodyBoxes(env)
    target_box = boxes.box(target) if target in env.obj_body_id else _site_box(env, boxes, target, inside=inside)
    obj_box = boxes.box(obj)
    others = [boxes.box(name) for name in env.obj_body_id if name != obj]
    centre = (obj_box[:3] + obj_box[3:]) / 2
    others.sort(key=lambda b: float(np.linalg.norm(((b[:3] + b[3:]) / 2 - centre)[:2])))
    others = others[:MAX_OBSTACLES]
    out = np.zeros(STATE_DIM, dtype=np.float64)
    out[0:6], out[6:12], out[12], out[13] = obj_box, target_box, float(inside), len(others)
    if others:
        out[14 : 14 + 6 * len(others)] = np.concatenate(others)
    return out.astype(np.float32)


class _BodyBoxes:
    """World AABBs of named objects from their collision geoms (geom lists cached per MuJoCo model)."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.model, self.data = env.sim.model._model, env.sim.data._data
        cached = getattr(env, "_expert_geoms", None)
        if cached is None or cached[0] is not self.model:
            cached = (self.model, {})
            env._expert_geoms = cached  # a hard reset builds a new model: the lists are rebuilt for it
        self.geoms: dict[str, np.ndarray] = cached[1]

    def box(self, name: str) -> np.ndarray:
        geoms = self.geoms.get(name)
        if geoms is None:
            geoms = self.geoms[name] = self._collision_geoms(self.env.obj_body_id[name])
        if not len(geoms):
            pos = self.data.xpos[self.env.obj_body_id[name]]
            return np.concatenate([pos, pos])
        aabb = self.model.geom_aabb[geoms]
        local = aabb[:, None, :3] + _SIGNS[None] * aabb[:, None, 3:]
        rot = self.data.geom_xmat[geoms].reshape(-1, 3, 3)
        points = self.data.geom_xpos[geoms][:, None, :] + np.einsum("gkj,gij->gki", local, rot)
        points = points.reshape(-1, 3)
        return np.concatenate([points.min(axis=0), points.max(axis=0)])

    def _collision_geoms(self, body: int) -> np.ndarray:
        model = self.model
        # every body of the object: a fixture such as a cabinet is a tree of bodies
        bodies = {body} | {b for b in range(model.nbody) if _descends(model, b, body)}
        # visual-only geoms are left out: their meshes overhang the collision shape
        return np.array(
            [g for g in range(model.ngeom) if model.geom_bodyid[g] in bodies and model.geom_contype[g] != 0],
            dtype=np.int64,
        )


def _descends(model: Any, b: int, root: int) -> bool:
    while b > 0:
        b = int(model.body_parentid[b])
        if b == root:
            return True
    return False


def _site_box(env: Any, boxes: _BodyBoxes, name: str, *, inside: bool) -> np.ndarray:
    model, data = boxes.model, boxes.data
    try:
        site = model.site(name).id
    except KeyError as exc:
        raise PolicyError(f"the expert cannot find target {name!r} (not an object, fixture or site)") from exc
    pos = data.site_xpos[site]
    half = np.abs(data.site_xmat[site].reshape(3, 3) @ model.site_size[site])
    if not inside:
        half[2] = 0.0  # an On region is a floor area: its "top" is where the object's bottom goes
        return np.concatenate([pos - half, pos + half])
    lo, hi = pos - half, pos + half
    owner = getattr(env.object_states_dict.get(name), "parent_name", None)
    if isinstance(owner, str) and owner in env.obj_body_id:
        hi[2] = max(hi[2], boxes.box(owner)[5])  # the container's walls: what a carried object must clear
    return np.concatenate([lo, hi])
