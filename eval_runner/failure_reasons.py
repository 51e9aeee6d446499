"""Why an episode failed: the evidence a tracker gathers from the simulator, and the one reason it points to.

An env kind's tracker (LIBERO's: :mod:`eval_runner.envs.libero_failures`) watches every step of an episode and
fills an :class:`Evidence`: how close the gripper came to each item of the goal, what it held and lifted, where
and how it let the goal's object go, which goal predicates held when, and at the end what stands out of place.
:func:`decide` turns that into one :class:`FailureCause`, the first reason of :class:`FailureReason` that
applies, in the enum's order (docs/robustness.md, "Failure reasons"):

1. ``never_reached``: the grip point never came within :data:`REACH_M` of the item's bounding box, and nothing
   else was held;
2. ``grasp_failed``: reached, but the object was never held (both fingers on it, lifted :data:`LIFT_M`), and
   nothing else was held;
3. ``wrong_object``: an object the goal does not move was held and lifted, and the goal's object never was
   (for an articulated item: never reached);
4. ``dropped``: the goal's object, once held, was let go and fell :data:`FALL_M` or more, away from its target;
5. ``wrong_target``: the goal's object was put down, its predicate never held, and its target stands in place;
6. ``knocked_over``: at the end the target (or the goal's object) is tilted :data:`TOPPLE_DEG` or more, or the
   target was pushed :data:`PUSH_M` or more from where it stood;
7. ``timeout_holding``: the gripper still holds the goal's object at the end;
8. ``undone``: the predicate held at some step, and no longer at the end;
9. ``timeout``: none of these (an articulated goal half done, an object hovering near its target...).

A goal of several predicates is judged on its first predicate (in the task's BDDL order) that does not hold at
the end. ``error`` is the loop's, not a tracker's: an episode that ended on a simulator error
(:func:`episode_failure`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rlinf_bench.contracts import FailureReason

__all__ = [
    "DETAIL_CHARS",
    "FALL_M",
    "LIFT_M",
    "PUSH_M",
    "REACH_M",
    "TOPPLE_DEG",
    "WATCH_STEPS",
    "Displacement",
    "Evidence",
    "FailureCause",
    "ItemTrack",
    "OtherGrasp",
    "Predicate",
    "PredicateTrack",
    "Release",
    "decide",
    "episode_failure",
]

#: The grip point (between the fingertips) within this of an item's collision shape: the item was reached.
REACH_M = 0.02
#: Both fingers on an object and the object this far above where it rested: it was held (grasped).
LIFT_M = 0.01
#: An object let go that falls this far within :data:`WATCH_STEPS` steps was dropped, not put down.
FALL_M = 0.03
#: Steps an object is watched after it was let go (20 Hz: half a second, enough to fall 1 m).
WATCH_STEPS = 10
#: Tilted this far from how it stood at the start: toppled.
TOPPLE_DEG = 45.0
#: A target moved this far (horizontally) from where it stood: pushed out of place.
PUSH_M = 0.05
#: :class:`~rlinf_bench.contracts.results.EpisodeResult` keeps at most this much of a detail.
DETAIL_CHARS = 512

_CARRY = ("on", "in")
_ARTICULATED = ("open", "close", "turnon", "turnoff")
#: How the BDDL files spell each predicate (for details a reader can match against the task file).
_SPELLING = {"on": "On", "in": "In", "open": "Open", "close": "Close", "turnon": "Turnon", "turnoff": "Turnoff"}


@dataclass(frozen=True)
class FailureCause:
    """A failure reason with its evidence in a sentence (steps, distances, object names)."""

    reason: FailureReason
    detail: str

    def __post_init__(self) -> None:
        if len(self.detail) > DETAIL_CHARS:
            object.__setattr__(self, "detail", self.detail[: DETAIL_CHARS - 1] + "…")


@dataclass(frozen=True)
class Predicate:
    """One predicate of a goal, as LIBERO parses it: ``("on", "akita_black_bowl_1", "plate_1")``."""

    name: str
    args: tuple[str, ...]

    @classmethod
    def parse(cls, raw: list[str] | tuple[str, ...]) -> Predicate:
        return cls(str(raw[0]).lower(), tuple(str(a) for a in raw[1:]))

    @property
    def carries(self) -> bool:
        """A pick-and-place predicate: its first argument is carried to its second (On, In)."""
        return self.name in _CARRY and len(self.args) == 2

    @property
    def known(self) -> bool:
        """A predicate the reasons understand: On/In of two things, or an articulated one of one thing."""
        return self.carries or (self.name in _ARTICULATED and len(self.args) == 1)

    @property
    def item(self) -> str:
        """What the gripper must reach: the carried object, or the articulated fixture (drawer, stove, door)."""
        return self.args[0]

    @property
    def target(self) -> str | None:
        return self.args[1] if self.carries else None

    def __str__(self) -> str:
        return f"({_SPELLING.get(self.name, self.name)} {' '.join(self.args)})"


@dataclass
class Release:
    """The goal's object let go: where, and how far it fell in the steps after."""

    step: int  # the first step it was no longer held
    height_m: float  # above where it rested at the start, when let go
    target_m: float  # horizontally from its target's centre, when let go
    over_target: bool  # within the target's footprint (and a margin)
    fell_m: float = 0.0  # the most it fell below the height it was let go at, while watched
    watch: int = WATCH_STEPS  # steps still to watch

    @property
    def dropped(self) -> bool:
        return self.fell_m >= FALL_M and not self.over_target


@dataclass
class ItemTrack:
    """What happened to one item of the goal (a carried object, or an articulated fixture)."""

    name: str
    closest_m: float = math.inf  # closest the grip point came to its bounding box
    closest_at: int = 0
    reached_at: int | None = None
    grasped_at: int | None = None
    lift_m: float = 0.0  # the most it was lifted while held
    releases: list[Release] = field(default_factory=list)
    held_at_end: bool = False
    target_m_at_end: float | None = None  # horizontally from its target's centre at the end


@dataclass
class PredicateTrack:
    """When one predicate of the goal held."""

    predicate: Predicate
    first_true_at: int | None = None
    last_true_at: int | None = None
    true_at_end: bool = False
    #: at the end, how far its target and carried object stand from where they stood (the tracker's choice of
    #: bodies: an object target, or the object a region belongs to, e.g. the basket of basket_1_contain_region)
    displaced: list[Displacement] = field(default_factory=list)

    def record(self, step: int, holds: bool) -> None:
        if holds:
            if self.first_true_at is None:
                self.first_true_at = step
            self.last_true_at = step
        self.true_at_end = holds


@dataclass(frozen=True)
class Displacement:
    """How far a thing was out of place at the end, against the start."""

    name: str
    tilt_deg: float
    moved_m: float  # horizontally
    is_target: bool  # a target can be pushed out of place; the carried object is moved on purpose

    @property
    def knocked(self) -> bool:
        return self.tilt_deg >= TOPPLE_DEG or (self.is_target and self.moved_m >= PUSH_M)

    def describe(self) -> str:
        if self.tilt_deg >= TOPPLE_DEG:
            return f"{self.name} tilted {self.tilt_deg:.0f}°"
        return f"{self.name} pushed {self.moved_m:.2f} m from where it stood"


@dataclass
class OtherGrasp:
    """The first object outside the goal that was held and lifted (``lift_m``: the most, while held then)."""

    name: str
    step: int
    lift_m: float


@dataclass
class Evidence:
    """Everything a tracker saw in one episode, ready for :func:`decide`."""

    steps: int
    predicates: list[PredicateTrack]
    items: dict[str, ItemTrack]
    other_grasp: OtherGrasp | None = None
    untracked: str | None = None  # why the goal could not be followed (the reason is then timeout)


def decide(evidence: Evidence) -> FailureCause:
    """The first reason that applies, in :class:`FailureReason`'s order (see the module docstring)."""
    ev = evidence
    if ev.untracked:
        return FailureCause(FailureReason.TIMEOUT, f"no success within {ev.steps} steps; {ev.untracked}")
    judged = next((p for p in ev.predicates if not p.true_at_end), None)
    if judged is None:  # the loop ended the episode on its step limit before LIBERO's check saw the goal
        return FailureCause(FailureReason.TIMEOUT, f"no success within {ev.steps} steps")
    pred = judged.predicate
    item = ev.items[pred.item]
    other = ev.other_grasp
    cause = _reach_and_grasp(pred, item, other)
    if cause is None and pred.carries:
        cause = _let_go(pred, judged, item)
    return cause or _at_the_end(pred, judged, item, ev)


def _reach_and_grasp(pred: Predicate, item: ItemTrack, other: OtherGrasp | None) -> FailureCause | None:
    if item.reached_at is None and other is None:
        return FailureCause(
            FailureReason.NEVER_REACHED,
            f"the gripper never came within {REACH_M * 100:.0f} cm of {item.name}: at closest "
            f"{item.closest_m:.3f} m from it (step {item.closest_at})",
        )
    if pred.carries and item.grasped_at is None and other is None:
        return FailureCause(
            FailureReason.GRASP_FAILED,
            f"reached {item.name} at step {item.reached_at} but never held it "
            f"(both fingers on it, lifted {LIFT_M * 100:.0f} cm)",
        )
    never = item.grasped_at is None if pred.carries else item.reached_at is None
    if other is not None and never:
        return FailureCause(
            FailureReason.WRONG_OBJECT,
            f"held {other.name} from step {other.step} (lifted {other.lift_m:.2f} m); "
            f"never {'held' if pred.carries else 'reached'} the goal's {item.name}",
        )
    return None


def _let_go(pred: Predicate, judged: PredicateTrack, item: ItemTrack) -> FailureCause | None:
    dropped = next((r for r in item.releases if r.dropped), None)
    if dropped is not None:
        return FailureCause(
            FailureReason.DROPPED,
            f"{item.name} dropped at step {dropped.step}: let go {dropped.height_m:.2f} m up, "
            f"{dropped.target_m:.2f} m from {pred.target}, fell {dropped.fell_m:.2f} m",
        )
    target_knocked = any(d.knocked and d.is_target for d in judged.displaced)
    if item.releases and judged.first_true_at is None and not target_knocked:
        last = item.releases[-1]
        # over the target yet not on it: LIBERO's On of an object wants the two centres within 3 cm
        where = "over" if last.over_target else "away from"
        return FailureCause(
            FailureReason.WRONG_TARGET,
            f"{item.name} put down at step {last.step} {where} {pred.target}'s footprint, "
            f"{last.target_m:.2f} m from its centre; {pred} never held",
        )
    return None


def _at_the_end(pred: Predicate, judged: PredicateTrack, item: ItemTrack, ev: Evidence) -> FailureCause:
    knocked = [d for d in judged.displaced if d.knocked]
    if knocked:
        return FailureCause(
            FailureReason.KNOCKED_OVER, f"at step {ev.steps}: " + "; ".join(d.describe() for d in knocked)
        )
    where = f"{item.name} {item.target_m_at_end:.2f} m from {pred.target}" if item.target_m_at_end is not None else ""
    if pred.carries and item.held_at_end:
        return FailureCause(
            FailureReason.TIMEOUT_HOLDING,
            f"still holding {item.name} at step {ev.steps}" + (f": {where}" if where else ""),
        )
    if judged.first_true_at is not None:
        return FailureCause(
            FailureReason.UNDONE,
            f"{pred} held from step {judged.first_true_at} to step {judged.last_true_at}, not at step {ev.steps}",
        )
    if pred.carries:
        let_go = f"; last let go at step {item.releases[-1].step}" if item.releases else ""
        return FailureCause(
            FailureReason.TIMEOUT, f"no success within {ev.steps} steps" + (f"; {where}" if where else "") + let_go
        )
    return FailureCause(
        FailureReason.TIMEOUT,
        f"{pred} never held in {ev.steps} steps; the gripper reached {item.name} at step {item.reached_at}",
    )


def episode_failure(
    success: bool, error: str | None, cause: FailureCause | None, steps: int
) -> tuple[FailureReason | None, str | None]:
    """The ``(failure_reason, failure_detail)`` an episode's result records: none on a success, ``error`` on a
    simulator error, else the scene's tracker's cause, else ``timeout`` (a kind without a tracker: RoboTwin)."""
    if success:
        return None, None
    if error is not None:
        return FailureReason.ERROR, FailureCause(FailureReason.ERROR, error).detail
    if cause is not None:
        return cause.reason, cause.detail
    return FailureReason.TIMEOUT, f"no success within {steps} steps"
