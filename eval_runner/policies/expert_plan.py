"""What the scripted expert (``builtin:expert``) does on each step: its phases and its choice of grasp.

An episode runs through :data:`PHASES` in order: ``reach`` (above the grasp point, the hand turned to
the grasp's yaw), ``descend``, ``grasp`` (close), ``lift`` (to a height that clears the target), ``carry``
(above the target), ``place`` (down onto it, or into it for an ``In`` goal), ``release`` (open) and
``retreat`` (up). A grasp that closed on nothing, or an object lost on the way, sends it back to
``reach`` (at most :data:`MAX_TRIES` grasps). Everything here reads only the state row of
:mod:`eval_runner.expert_state`, the end effector and the fingers: it is a pure function of the episode's
observations, so an episode at noise 0 is the same every time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from eval_runner.expert_state import MAX_OBSTACLES, STATE_DIM
from rlinf_bench.errors import PolicyError

PHASES = ("reach", "descend", "grasp", "lift", "carry", "place", "release", "retreat")
OPEN, CLOSE = -1.0, 1.0
GRIP_WIDTH = 0.07  # objects wider than this across the fingers are grasped by their rim (bowls)
MAX_TRIES = 3  # grasps per episode: the first and two more after a miss or a drop
LOST = 0.025  # how far (m) the object may drift from where the closed hand held it before it counts as lost
REACH_ABOVE = 0.08  # the reach ends this far above the grasp point, then the hand descends straight down
IN_CLEARANCE = 0.03  # an object lowered into a container stops this far above the container's bottom

# The hand at yaw 0 (fingers closing along world y), relative to the end effector (the point between the
# fingertips), as boxes (half-x, half-y, bottom z): the collision geoms of robosuite's Panda gripper.
_HAND = (0.035, 0.105, 0.025)
_FINGERS = (0.013, 0.068, -0.013)  # both open fingers together
_CLEAR = 0.005  # how far the hand's boxes are grown when they are checked against obstacles


@dataclass(frozen=True)
class Scene:
    """One privileged state row, unpacked (see :mod:`eval_runner.expert_state` for the layout)."""

    obj_lo: np.ndarray
    obj_hi: np.ndarray
    tgt_lo: np.ndarray
    tgt_hi: np.ndarray
    inside: bool
    obstacles: np.ndarray  # [n, 6]: lo(3), hi(3)

    @classmethod
    def parse(cls, row: np.ndarray) -> Scene:
        if row.shape != (STATE_DIM,):
            raise PolicyError(
                f"builtin:expert got a privileged_state row of shape {row.shape}, expected ({STATE_DIM},): "
                "the state eval_runner.expert_state.privileged_state writes"
            )
        n = min(round(float(row[13])), MAX_OBSTACLES)
        return cls(row[0:3], row[3:6], row[6:9], row[9:12], bool(row[12] > 0.5), row[14 : 14 + 6 * n].reshape(n, 6))

    @property
    def centre(self) -> np.ndarray:
        return (self.obj_lo + self.obj_hi) / 2


@dataclass(frozen=True)
class Grasp:
    """Where the fingertips close, relative to the object's box, and the hand's yaw (0 or 90 degrees)."""

    yaw: float = 0.0
    along: float = 0.0  # offset from the object's centre along the fingers' pads (m)
    rim: bool = False  # a wide object held by its +y wall rather than across its body

    def point(self, scene: Scene) -> np.ndarray:
        lo, hi = scene.obj_lo, scene.obj_hi
        height = hi[2] - lo[2]
        point = scene.centre.copy()
        if self.rim:
            point[1] = hi[1] - 0.012  # the wall between the fingers
            point[2] = hi[2] - min(0.03, height / 2)
            return point
        point[2] = hi[2] - min(0.035, height / 2)
        point[0 if self.yaw == 0.0 else 1] += self.along
        return point


def choose_grasp(scene: Scene) -> Grasp:
    """The grasp whose hand lands on nothing else, preferring yaw 0 and the object's middle.

    The closed width across the fingers must fit (:data:`GRIP_WIDTH`); a wider object is held by its rim.
    Each candidate's hand and open fingers, placed at the grasp point, are checked against every obstacle's
    box: the one that reaches least into any obstacle wins, ties going to the earlier (simpler) candidate.
    """
    size = scene.obj_hi - scene.obj_lo
    candidates: list[Grasp] = []
    for yaw, across, pads in ((0.0, size[1], size[0]), (np.pi / 2, size[0], size[1])):
        if across > GRIP_WIDTH:
            continue
        reach = max(0.0, pads / 2 - 0.012)  # the pads stay on the object
        candidates += [Grasp(yaw, f * reach) for f in (0.0, -0.5, 0.5, -1.0, 1.0)]
    if not candidates:
        return Grasp(rim=True)
    return min(candidates, key=lambda g: round(hand_collision(scene, g), 3))


def hand_collision(scene: Scene, grasp: Grasp) -> float:
    """How far (m) the hand at ``grasp`` would reach down into the highest obstacle under it (0: none)."""
    point = grasp.point(scene)
    worst = 0.0
    for half_x, half_y, bottom in (_HAND, _FINGERS):
        if grasp.yaw != 0.0:
            half_x, half_y = half_y, half_x
        reach = np.array([half_x, half_y]) + _CLEAR
        lo, hi = point[:2] - reach, point[:2] + reach
        for box in scene.obstacles:
            if np.all(box[:2] < hi) and np.all(box[3:5] > lo):
                worst = max(worst, float(box[5] - (point[2] + bottom)))
    return worst


@dataclass
class Episode:
    """One episode's progress through :data:`PHASES` (kept by the policy per episode id)."""

    rng: np.random.Generator
    phase: str = "reach"
    ticks: int = 0  # steps spent in the phase
    tries: int = 1  # grasps started
    grasp: Grasp = field(default_factory=Grasp)
    offset: np.ndarray = field(default_factory=lambda: np.zeros(3))  # object centre minus eef, once held
    hang: float = 0.0  # eef height above the object's bottom, once held
    carry_z: float = 0.0  # the eef height to carry at, fixed when the grasp closes
    last_z: float = 0.0  # eef height on the previous step (to see a descent that has stopped)
    base_rot: np.ndarray | None = None  # the hand's orientation on the first step: yaw 0
    turned: bool = False  # the hand was ever turned: from then on its orientation is steered every step
    turn_error: float = 0.0  # angle (rad) still to turn, as of the previous step

    def enter(self, phase: str) -> None:
        self.phase, self.ticks = phase, 0


def plan_step(ep: Episode, eef: np.ndarray, scene: Scene) -> tuple[np.ndarray, float]:
    """Advance the episode's phase and return (eef target position, gripper command)."""
    ep.ticks += 1
    if ep.phase == "reach" and ep.ticks == 1:
        ep.grasp = choose_grasp(scene)
    grasp = ep.grasp.point(scene)
    stalled = ep.ticks > 3 and ep.last_z - eef[2] < 0.001
    ep.last_z = float(eef[2])
    if ep.phase == "reach":
        target = grasp + np.array([0.0, 0.0, REACH_ABOVE])
        if (np.linalg.norm(target - eef) < 0.015 and ep.turn_error < 0.05) or ep.ticks > 60:
            ep.enter("descend")
        return target, OPEN
    if ep.phase == "descend":
        if np.linalg.norm(grasp - eef) < 0.008 or ep.ticks > 30:
            ep.enter("grasp")
        return grasp, OPEN
    if ep.phase == "grasp":
        if ep.ticks >= 10:
            ep.enter("lift")
            ep.offset, ep.hang = scene.centre - eef, float(eef[2] - scene.obj_lo[2])
            # high enough to clear the target (and what stands around it) with the object hanging below
            ep.carry_z = max(float(scene.tgt_hi[2]) + ep.hang + 0.06, float(eef[2]) + 0.08)
        return grasp, CLOSE
    # the fingers' gap cannot tell a bowl's thin rim from nothing: the object must go where the hand goes
    lost = np.linalg.norm(scene.centre - eef - ep.offset) > LOST
    if ep.phase in ("lift", "carry") and lost and ep.tries < MAX_TRIES:
        ep.tries += 1  # closed on nothing, or dropped it: open and start over from above the object
        ep.enter("reach")
        return eef + np.array([0.0, 0.0, 0.05]), OPEN
    over = (scene.tgt_lo + scene.tgt_hi) / 2 - np.array([ep.offset[0], ep.offset[1], 0.0])
    if ep.phase == "lift":
        if eef[2] > ep.carry_z - 0.02 or ep.ticks > 40:
            ep.enter("carry")
        return np.array([eef[0], eef[1], ep.carry_z]), CLOSE
    if ep.phase == "carry":
        target = np.array([over[0], over[1], ep.carry_z])
        if np.linalg.norm((target - eef)[:2]) < 0.01 or ep.ticks > 60:
            ep.enter("place")
        return target, CLOSE
    if ep.phase == "place":
        # On: the object's bottom onto the target's top; In: down into the container, near its bottom
        rest = scene.tgt_lo[2] + IN_CLEARANCE if scene.inside else scene.tgt_hi[2]
        target = np.array([over[0], over[1], rest + ep.hang + 0.005])
        if scene.obj_lo[2] < rest + 0.02 or ep.ticks > 40 or (scene.inside and stalled):
            ep.enter("release")
        return target, CLOSE
    if ep.phase == "release":
        if ep.ticks >= 8:
            ep.enter("retreat")
        return eef.copy(), OPEN
    return eef + np.array([0.0, 0.0, 0.05]), OPEN
