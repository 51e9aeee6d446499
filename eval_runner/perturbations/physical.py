"""The physical axes: robot_init and layout, as edits of one episode's initial state before it settles.

Both are applied right after the fixed initial state is loaded and before the settle steps, so the
settle steps (the protocol's own) let the scene come to rest as usual. A layout is checked physically
valid twice: before settling, no object may sink into another (MuJoCo's contacts, by penetration depth);
after settling, every moved object must have stayed where it was put (not fallen off its support,
toppled or slid). An invalid draw is redrawn from the same generator, a bounded number of times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "LayoutDraw",
    "layout_groups",
    "layout_regions",
    "offset_robot_joints",
    "penetrations",
    "place_layout",
    "settled",
]

#: A contact deeper than this (m), and deeper than the same pair's in the unperturbed state, is interpenetration.
PENETRATION_M = 0.002
#: After the settle steps a moved object may have slid this far from where it was put (m, horizontally),
#: dropped this far (m: onto its support, not off it), turned this far (deg), and move no faster (m/s).
DRIFT_M = 0.02
FALL_M = 0.15
TURN_DEG = 20.0
SPEED_M_S = 0.05
#: Directions drawn per object group before a layout draw counts as interpenetrating.
DIRECTIONS = 12
#: Joint angles keep this far inside their limits (rad).
JOINT_MARGIN = 0.01


def offset_robot_joints(env: Any, rng: np.random.Generator, norm: float) -> dict[str, Any]:
    """Offset the arm's joint angles by a vector of length ``norm`` rad in a drawn direction (kept inside the
    joints' limits), at rest: LIBERO-plus's robot initial states (a unit Gaussian direction over the 7 joints,
    scaled to 0.1-0.5 rad)."""
    sim = env.sim
    robot = env.robots[0]
    direction = rng.standard_normal(len(robot.robot_joints))
    offsets = norm * direction / float(np.linalg.norm(direction))
    applied = []
    for name, offset in zip(robot.robot_joints, offsets, strict=True):
        joint = sim.model.joint_name2id(name)
        low, high = sim.model.jnt_range[joint]
        start = sim.model.jnt_qposadr[joint]
        before = float(sim.data.qpos[start])
        after = float(np.clip(before + offset, low + JOINT_MARGIN, high - JOINT_MARGIN))
        sim.data.qpos[start] = after
        sim.data.qvel[sim.model.jnt_dofadr[joint]] = 0.0
        applied.append(round(after - before, 9))
    sim.forward()
    return {"joint_offsets_rad": applied}


def layout_groups(env: Any) -> dict[str, list[str]]:
    """The movable objects standing on the workspace's surface (the table, or the floor), each with the objects
    that stand on or in it (they move with it). Objects on a fixture (a cabinet, a stove) stay where they are."""
    problem = env.parsed_problem
    regions = problem["regions"]
    support: dict[str, str] = {}
    for predicate in problem["initial_state"]:
        if len(predicate) != 3 or predicate[0].lower() not in ("on", "in") or predicate[1] not in env.objects_dict:
            continue
        place = predicate[2]
        support[predicate[1]] = regions[place]["target"] if place in regions else place

    def root(name: str) -> str | None:
        seen = set()
        while support.get(name) in env.objects_dict and name not in seen:
            seen.add(name)
            name = support[name]
        target = support.get(name)
        return None if target is None or target in env.fixtures_dict else name

    groups: dict[str, list[str]] = {}
    for name in env.objects_dict:
        top = root(name)
        if top is not None:
            groups.setdefault(top, []).append(name)
    return {top: sorted(members, key=lambda n: (n != top, n)) for top, members in sorted(groups.items())}


def layout_regions(env: Any, groups: dict[str, list[str]]) -> dict[str, tuple[float, float, float, float]]:
    """Each group whose object the BDDL file starts in a region of the workspace: that region's box
    (x0, y0, x1, y1) in the world, as LIBERO's placement samplers read it (the ranges plus the workspace's
    offset). Groups not in such a region are left out."""
    problem = env.parsed_problem
    regions = problem["regions"]
    dx, dy = (float(v) for v in tuple(getattr(env, "workspace_offset", (0.0, 0.0, 0.0)))[:2])
    boxes: dict[str, tuple[float, float, float, float]] = {}
    for predicate in problem["initial_state"]:
        if len(predicate) != 3 or predicate[0].lower() != "on" or predicate[1] not in groups:
            continue
        region = regions.get(predicate[2])
        if region is None or region.get("target") in env.objects_dict or not region.get("ranges"):
            continue
        x0, y0, x1, y1 = region["ranges"][0]
        boxes[predicate[1]] = (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
    return boxes


def _free_joint(env: Any, name: str) -> tuple[int, int]:
    """(qpos address, dof address) of object ``name``'s free joint."""
    model = env.sim.model
    joint = model.joint_name2id(env.objects_dict[name].joints[-1])
    return int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint])


@dataclass
class LayoutDraw:
    """One drawn layout: each group's horizontal offset, and where each moved object was put."""

    offsets: dict[str, tuple[float, float]]
    #: object -> its free joint's pose (x, y, z, qw, qx, qy, qz) where it was put
    placed: dict[str, np.ndarray] = field(default_factory=dict)

    def params(self, distractors: tuple[str, ...] = ()) -> dict[str, Any]:
        """The record's parameters: each group's offset; each distractor's name and where it was put (x, y)."""
        out: dict[str, Any] = {
            f"offset_{name}": [round(dx, 9), round(dy, 9)]
            for name, (dx, dy) in self.offsets.items()
            if name not in distractors
        }
        if distractors:
            out["distractors"] = ",".join(distractors)
            out |= {f"at_{name}": [round(float(v), 9) for v in self.placed[name][:2]] for name in distractors}
        return out


def _drawn_offset(
    rng: np.random.Generator, distance: float, box: tuple[float, float, float, float] | None, at: np.ndarray
) -> tuple[float, float]:
    """Where a group moves: to a point drawn in its region's box grown by ``distance`` on every side; a group
    in no region, by ``distance`` in a drawn direction."""
    if box is None:
        angle = float(rng.uniform(0.0, 2 * math.pi))
        return distance * math.cos(angle), distance * math.sin(angle)
    x0, y0, x1, y1 = box
    x, y = float(rng.uniform(x0 - distance, x1 + distance)), float(rng.uniform(y0 - distance, y1 + distance))
    return x - float(at[0]), y - float(at[1])


def place_layout(
    env: Any,
    groups: dict[str, list[str]],
    rng: np.random.Generator,
    distance: float,
    regions: dict[str, tuple[float, float, float, float]] | None = None,
) -> tuple[LayoutDraw, list[str]]:
    """Move each group to a drawn place (:func:`_drawn_offset`; ``regions``: :func:`layout_regions`), height
    and orientation kept, at rest.

    Groups are placed one after the other; a place that sinks a group into anything (the others as placed so
    far, fixtures, the robot) is drawn again, up to :data:`DIRECTIONS` times. Returns the draw and, when some
    group found no free place, what it ran into (the draw is then invalid)."""
    sim = env.sim
    regions = regions or {}
    before = penetrations(env)
    draw = LayoutDraw(offsets={})
    blocked: list[str] = []
    for top, members in groups.items():
        joints = [_free_joint(env, name) for name in members]
        start = {name: sim.data.qpos[q : q + 7].copy() for name, (q, _) in zip(members, joints, strict=True)}
        clash: list[str] = []
        for _ in range(DIRECTIONS):
            dx, dy = _drawn_offset(rng, distance, regions.get(top), start[top])
            for name, (qpos, dof) in zip(members, joints, strict=True):
                sim.data.qpos[qpos : qpos + 7] = start[name]
                sim.data.qpos[qpos : qpos + 2] += (dx, dy)
                sim.data.qvel[dof : dof + 6] = 0.0
            sim.forward()
            clash = interpenetrating(penetrations(env), before, set(members))
            if not clash:
                break
        draw.offsets[top] = (dx, dy)
        blocked += clash
        for name, (qpos, _) in zip(members, joints, strict=True):
            draw.placed[name] = sim.data.qpos[qpos : qpos + 7].copy()
    return draw, blocked


def _object_of_body(env: Any) -> dict[int, str]:
    """Body id -> the object or fixture it belongs to (every body of its subtree)."""
    model = env.sim.model._model
    owners = {int(body): name for name, body in env.obj_body_id.items()}
    out: dict[int, str] = {}
    for body in range(model.nbody):
        b = body
        while b > 0 and b not in owners:
            b = int(model.body_parentid[b])
        if b in owners:
            out[body] = owners[b]
    return out


def penetrations(env: Any) -> dict[tuple[str, str], float]:
    """(thing, thing) -> the deepest penetration (m, > 0) between two distinct objects, fixtures or the rest
    of the scene (``scene``: the table, the floor, the robot), from MuJoCo's contacts as they are now."""
    model, data = env.sim.model._model, env.sim.data._data
    owner = _object_of_body(env)
    deepest: dict[tuple[str, str], float] = {}
    for i in range(data.ncon):
        contact = data.contact[i]
        a = owner.get(int(model.geom_bodyid[contact.geom1]), "scene")
        b = owner.get(int(model.geom_bodyid[contact.geom2]), "scene")
        if a == b or contact.dist >= 0:
            continue
        pair = (min(a, b), max(a, b))
        deepest[pair] = max(deepest.get(pair, 0.0), -float(contact.dist))
    return deepest


def interpenetrating(
    now: dict[tuple[str, str], float], before: dict[tuple[str, str], float], moved: set[str]
) -> list[str]:
    """The pairs with a moved object sunk into something deeper than :data:`PENETRATION_M` and than before."""
    return [
        f"{a}/{b} {depth * 1000:.1f} mm"
        for (a, b), depth in sorted(now.items())
        if (a in moved or b in moved) and depth > PENETRATION_M and depth > before.get((a, b), 0.0) + 0.001
    ]


def settled(env: Any, draw: LayoutDraw) -> list[str]:
    """The moved objects that did not stay where they were put through the settle steps: slid or rolled away,
    toppled, fell off their support, or still moving. (LIBERO's initial states hold the objects a few cm above
    their support; the settle steps drop them onto it, so height alone is not a drift.)"""
    sim = env.sim
    unsettled = []
    for name, placed in draw.placed.items():
        qpos, dof = _free_joint(env, name)
        pose = sim.data.qpos[qpos : qpos + 7]
        drift = float(np.linalg.norm(pose[:2] - placed[:2]))
        drop = float(placed[2] - pose[2])
        turn = math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(pose[3:], placed[3:]))))))
        speed = float(np.linalg.norm(sim.data.qvel[dof : dof + 3]))
        if drift > DRIFT_M or drop > FALL_M or turn > TURN_DEG or speed > SPEED_M_S:
            unsettled.append(
                f"{name} slid {drift * 100:.1f} cm, dropped {drop * 100:.1f} cm, turned {turn:.0f} deg "
                f"(speed {speed:.2f} m/s)"
            )
    return unsettled
