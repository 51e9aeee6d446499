"""LIBERO's failure tracker: reads the goal's predicates and the MuJoCo state each step, in the env worker.

:meth:`LiberoFailureTracker.start` runs once per episode, after the settle steps: it parses the task's BDDL goal
(LIBERO's ``parsed_problem["goal_state"]``), maps every collision geom to the movable object it belongs to, and
notes where everything stands. :meth:`~LiberoFailureTracker.observe` then runs after every policy step and reads
only what changes: which object both fingers touch (MuJoCo's contact list), the objects' heights, the grip
point's distance to the goal's items until they are reached, and, for a goal of several predicates, each
predicate as LIBERO evaluates it (a goal of one predicate is LIBERO's own success flag). Geometry that is needed
only when something happens (a target's footprint when an object is let go, tilts at the end) is computed then.
:meth:`~LiberoFailureTracker.cause` turns the evidence into a reason (:func:`eval_runner.failure_reasons.decide`).
bench/failure_tracker.py measures what a step costs with it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval_runner.failure_reasons import (
    FALL_M,
    LIFT_M,
    REACH_M,
    Displacement,
    Evidence,
    FailureCause,
    ItemTrack,
    OtherGrasp,
    Predicate,
    PredicateTrack,
    Release,
    decide,
)

__all__ = ["LiberoFailureTracker"]

log = logging.getLogger(__name__)

#: A margin around a target's footprint: an object let go this close to it was let go over the target.
OVER_TARGET_MARGIN_M = 0.01
_LEFT, _RIGHT = 1, 2


@dataclass
class _Place:
    """Something the goal names, in the MuJoCo model: an object or fixture (a body tree) or a region (a site)."""

    name: str
    body: int  # the object's root body, or the body the site is attached to
    site: int | None  # the region's site; None for an object or fixture
    geoms: np.ndarray  # collision geoms of ``body`` and every body under it


@dataclass
class _Reach:
    """An item not reached yet, with its bounding box in its body's frame (fixed for a rigid body)."""

    place: _Place
    track: ItemTrack
    lo: np.ndarray
    hi: np.ndarray


@dataclass
class _Watch:
    index: int  # movable object
    release: Release
    height: float  # the object's height when it was let go


class LiberoFailureTracker:
    """Follows one episode of a LIBERO scene at a time (see the module docstring)."""

    def __init__(self) -> None:
        self._untracked: str | None = "the episode has not started"
        self._steps = 0

    # -- episode start ---------------------------------------------------------------------------
    def start(self, env: Any) -> None:
        """Begin an episode of ``env`` (LIBERO's robosuite env, ``ControlEnv.env``), after its settle steps.

        A scene the tracker cannot index (a variant with other names or another gripper) leaves the episode
        untracked, its failure then ``timeout`` with why: the reasons explain an evaluation, never cost it one."""
        self._steps = 0
        try:
            self._begin(env)
        except Exception as exc:  # any failure of the tracker is the tracker's, not the episode's
            self._untracked = _broke("index this scene", exc)

    def _begin(self, env: Any) -> None:
        self._env = env
        self._m, self._d = env.sim.model._model, env.sim.data._data
        self._held = -1
        self._held_height = 0.0
        self._watching: list[_Watch] = []
        self._other: OtherGrasp | None = None
        goal = [Predicate.parse(p) for p in env.parsed_problem["goal_state"]]
        self._raw_goal = list(env.parsed_problem["goal_state"])
        self._predicates = [PredicateTrack(p) for p in goal]
        self._untracked = self._follow(env, goal)

    def _follow(self, env: Any, goal: list[Predicate]) -> str | None:
        """Index the scene for ``goal``; why it cannot be followed, or None."""
        m, d = self._m, self._d
        unknown = [str(p) for p in goal if not p.known]
        if unknown or not goal:
            return f"goal predicates {', '.join(unknown) or '(none)'} are not ones the failure reasons follow"
        self._movable = [name for name in env.objects_dict if name in env.obj_body_id]
        self._roots = np.array([env.obj_body_id[name] for name in self._movable], dtype=np.int64)
        owner_of_body = np.full(m.nbody, -1, dtype=np.int64)
        for index, root in enumerate(self._roots):
            owner_of_body[_subtree(m, int(root))] = index
        collides = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
        self._owner = np.where(collides, owner_of_body[m.geom_bodyid], -1)
        self._finger = np.zeros(m.ngeom, dtype=np.int8)
        gripper = env.robots[0].gripper.important_geoms
        for side, key in ((_LEFT, "left_finger"), (_RIGHT, "right_finger")):
            for geom in gripper[key]:
                self._finger[m.geom(geom).id] = side
        self._eef_site = int(env.robots[0].eef_site_id)
        self._z0 = d.xpos[self._roots, 2].copy()
        self._xpos0, self._xmat0 = d.xpos.copy(), d.xmat.copy()
        self._items: dict[str, ItemTrack] = {}
        self._targets: dict[int, tuple[ItemTrack, _Place]] = {}  # carried object (movable index) -> target
        self._reach: list[_Reach] = []
        self._goal_places: dict[str, _Place] = {}
        for pred in goal:
            for name in pred.args:
                place = _place(env, m, name)
                if place is None:
                    return f"{pred} names {name}, which is neither an object, a fixture nor a region of this scene"
                self._goal_places[name] = place
            if pred.item in self._items:
                continue
            track = self._items[pred.item] = ItemTrack(pred.item)
            place = self._goal_places[pred.item]
            self._reach.append(_Reach(place, track, *_local_box(m, d, place)))
            if pred.carries and pred.item in self._movable and pred.target is not None:
                self._targets[self._movable.index(pred.item)] = (track, self._goal_places[pred.target])
        return None

    # -- every step ------------------------------------------------------------------------------
    def observe(self, success: bool) -> None:
        """Read the state after a policy step; ``success``: LIBERO's own check of the whole goal at this step."""
        self._steps += 1
        if self._untracked is not None:
            return
        try:
            self._observe(success)
        except Exception as exc:  # as in start: the episode goes on, untracked
            self._untracked = _broke(f"follow step {self._steps}", exc)

    def _observe(self, success: bool) -> None:
        step, d = self._steps, self._d
        held = self._held_object()
        if self._reach:
            self._reach_items(step, d.site_xpos[self._eef_site])
        if held >= 0 or self._held >= 0 or self._watching:  # heights matter only around a hold
            heights = d.xpos[self._roots, 2]
            if self._watching:
                self._watch(heights, held)
            if self._held >= 0 and held != self._held:
                self._let_go(self._held, step, float(heights[self._held]))
            if held >= 0:
                self._holding(held, float(heights[held] - self._z0[held]), step)
                self._held_height = float(heights[held])
        self._held = held
        if len(self._predicates) == 1:
            self._predicates[0].record(step, success)
        else:
            for track, raw in zip(self._predicates, self._raw_goal, strict=True):
                track.record(step, bool(self._env._eval_predicate(raw)))

    def _held_object(self) -> int:
        """The movable object both fingers touch (a goal's carried object first), or -1."""
        if self._d.ncon == 0:
            return -1
        geoms = self._d.contact.geom.ravel()  # contact k's two geoms at 2k and 2k + 1
        sides = self._finger[geoms]
        at = np.flatnonzero(sides)
        if not at.size:
            return -1
        left: set[int] = set()
        right: set[int] = set()
        for side, owner in zip(sides[at].tolist(), self._owner[geoms[at ^ 1]].tolist(), strict=True):
            if owner >= 0:
                (left if side == _LEFT else right).add(owner)
        both = left & right
        if not both:
            return -1
        carried = both.intersection(self._targets)
        return min(carried or both)

    def _reach_items(self, step: int, eef: np.ndarray) -> None:
        d = self._d
        for reach in self._reach:
            body, track = reach.place.body, reach.track
            local = d.xmat[body].reshape(3, 3).T @ (eef - d.xpos[body])
            outside = np.maximum(np.maximum(reach.lo - local, local - reach.hi), 0.0)
            distance = math.sqrt(float(outside @ outside))
            if distance < track.closest_m:
                track.closest_m, track.closest_at = distance, step
            if distance <= REACH_M:
                self._reached(track, step)

    def _reached(self, track: ItemTrack, step: int) -> None:
        if track.reached_at is None:
            track.reached_at = step
            self._reach = [r for r in self._reach if r.track is not track]

    def _holding(self, index: int, lift: float, step: int) -> None:
        carried = self._targets.get(index)
        name = self._movable[index]
        if carried is not None or name in self._items:
            track = carried[0] if carried is not None else self._items[name]
            self._reached(track, step)
            track.lift_m = max(track.lift_m, lift)
            if track.grasped_at is None and lift >= LIFT_M:
                track.grasped_at = step
        elif self._other is None and lift >= LIFT_M:
            self._other = OtherGrasp(name, step, lift)
        elif self._other is not None and self._other.name == name:
            self._other.lift_m = max(self._other.lift_m, lift)

    def _let_go(self, index: int, step: int, height_now: float) -> None:
        carried = self._targets.get(index)
        if carried is None:
            return
        track, target = carried
        centre, radius = _footprint(self._m, self._d, target)
        offset = self._d.xpos[self._roots[index], :2] - centre[:2]
        target_m = math.sqrt(float(offset @ offset))
        release = Release(
            step=step,
            height_m=self._held_height - float(self._z0[index]),
            target_m=target_m,
            over_target=target_m <= radius + OVER_TARGET_MARGIN_M,
            fell_m=max(0.0, self._held_height - height_now),
        )
        track.releases.append(release)
        self._watching.append(_Watch(index, release, self._held_height))

    def _watch(self, heights: np.ndarray, held: int) -> None:
        """Follow each object let go for its first steps: held again without a fall, the release did not count."""
        kept = []
        for w in self._watching:
            release = w.release
            if held == w.index:
                if release.fell_m < FALL_M:
                    self._targets[w.index][0].releases.remove(release)
                continue
            release.fell_m = max(release.fell_m, w.height - float(heights[w.index]))
            release.watch -= 1
            if release.watch > 0:
                kept.append(w)
        self._watching = kept

    # -- episode end -----------------------------------------------------------------------------
    def cause(self) -> FailureCause:
        """Why the episode that just ended failed (call it only for a failed one)."""
        try:
            return self._cause()
        except Exception as exc:  # as in start
            self._untracked = _broke("read the end of the episode", exc)
            return decide(Evidence(self._steps, [], {}, untracked=self._untracked))

    def _cause(self) -> FailureCause:
        if self._untracked is not None:
            return decide(Evidence(self._steps, [], {}, untracked=self._untracked))
        d = self._d
        for index, (track, target) in self._targets.items():
            track.held_at_end = index == self._held
            centre, _ = _footprint(self._m, d, target)
            offset = d.xpos[self._roots[index], :2] - centre[:2]
            track.target_m_at_end = math.sqrt(float(offset @ offset))
        for judged in self._predicates:
            judged.displaced = self._displacements(judged.predicate)
        return decide(Evidence(self._steps, self._predicates, self._items, other_grasp=self._other))

    def _displacements(self, pred: Predicate) -> list[Displacement]:
        """How the predicate's target (an object, or the movable object a region belongs to) and carried object
        stand against the start; a region of the table or of a fixture does not move."""
        out = []
        if pred.target is not None:
            body = self._goal_places[pred.target].body
            index = np.flatnonzero(self._roots == body)
            if index.size:
                out.append(self._displacement(self._movable[int(index[0])], body, is_target=True))
            elif self._goal_places[pred.target].site is None:
                out.append(self._displacement(pred.target, body, is_target=True))
        if pred.carries:
            out.append(self._displacement(pred.item, self._goal_places[pred.item].body, is_target=False))
        return out

    def _displacement(self, name: str, body: int, *, is_target: bool) -> Displacement:
        up0 = self._xmat0[body].reshape(3, 3)[:, 2]
        up = self._d.xmat[body].reshape(3, 3)[:, 2]
        tilt = math.degrees(math.acos(float(np.clip(up0 @ up, -1.0, 1.0))))
        moved = self._d.xpos[body, :2] - self._xpos0[body, :2]
        return Displacement(name, tilt, math.sqrt(float(moved @ moved)), is_target)


def _broke(what: str, exc: Exception) -> str:
    """Why an episode is untracked after the tracker itself failed (logged: it is a tracker bug to report)."""
    log.warning("the failure tracker could not %s", what, exc_info=exc)
    return f"the failure tracker could not {what} ({type(exc).__name__}: {exc})"


def _place(env: Any, m: Any, name: str) -> _Place | None:
    """``name`` in the model: an object or fixture LIBERO knows the body of, else a site; None when neither."""
    import mujoco

    site: int | None = None
    if name in env.obj_body_id:
        body = int(env.obj_body_id[name])
    else:
        found = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name)
        if found < 0:
            return None
        site, body = found, int(m.site_bodyid[found])
    bodies = _subtree(m, body)
    collides = (m.geom_contype != 0) | (m.geom_conaffinity != 0)
    geoms = np.flatnonzero(np.isin(m.geom_bodyid, bodies) & collides)
    return _Place(name, body, site, geoms)


def _subtree(m: Any, root: int) -> np.ndarray:
    """``root`` and every body under it (a fixture such as a cabinet is a tree of bodies)."""
    parents = m.body_parentid
    inside = np.zeros(m.nbody, dtype=bool)
    inside[root] = True
    for body in range(root + 1, m.nbody):  # MuJoCo numbers a child after its parent
        inside[body] = inside[parents[body]]
    return np.flatnonzero(inside)


def _boxes(m: Any, d: Any, geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World centres and world-axis half sizes of the geoms' bounding boxes."""
    rot = d.geom_xmat[geoms].reshape(-1, 3, 3)
    centres = d.geom_xpos[geoms] + np.einsum("nij,nj->ni", rot, m.geom_aabb[geoms, :3])
    half = np.einsum("nij,nj->ni", np.abs(rot), m.geom_aabb[geoms, 3:])
    return centres, half


def _local_box(m: Any, d: Any, place: _Place) -> tuple[np.ndarray, np.ndarray]:
    """The place's collision boxes, bounded in its body's frame (a region without geoms: its site's point)."""
    rot, origin = d.xmat[place.body].reshape(3, 3), d.xpos[place.body]
    if not place.geoms.size:
        point = rot.T @ (d.site_xpos[place.site] - origin) if place.site is not None else np.zeros(3)
        return point, point.copy()
    centres, half = _boxes(m, d, place.geoms)
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
    corners = (centres[:, None, :] + signs[None, :, :] * half[:, None, :]).reshape(-1, 3)
    local = (corners - origin) @ rot
    return local.min(axis=0), local.max(axis=0)


def _footprint(m: Any, d: Any, place: _Place) -> tuple[np.ndarray, float]:
    """A target's centre and horizontal radius: its collision boxes' for an object, its extent for a region."""
    if place.site is not None:
        rot = d.site_xmat[place.site].reshape(3, 3)
        half = np.abs(rot) @ m.site_size[place.site]
        return d.site_xpos[place.site], float(max(half[0], half[1]))
    if not place.geoms.size:
        return d.xpos[place.body], 0.0
    centres, half = _boxes(m, d, place.geoms)
    lo, hi = (centres - half).min(axis=0), (centres + half).max(axis=0)
    return (lo + hi) / 2, float(max(hi[0] - lo[0], hi[1] - lo[1]) / 2)
