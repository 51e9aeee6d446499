"""What a perturbed episode records, and why an episode failed: the data behind robustness and failure analysis.

A perturbation is one (axis, level) of one episode. Its parameters are drawn from (run seed, task, initial state,
axis, level) only, so a re-run, a resumed run or another worker count draws the same ones. Level 0 of every axis
is the unperturbed episode, bit for bit. Perturbed episodes sit beside the run's standard episodes (the control
arm): the twin of a perturbed episode is the standard episode of the same task and initial state, so every
robustness effect is a paired difference.

A failure reason is read from the simulator (the task's goal predicates and the objects' and gripper's states,
tracked every step), never from pixels or a grader: the same state gives the same reason.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from rlinf_bench.contracts.limits import MAX_TRIALS, Name, SettingText

__all__ = [
    "AXES",
    "MAX_LEVEL",
    "PROFILES",
    "ROTATING_PROFILES",
    "STATE_SHARE_DIVISOR",
    "FailureReason",
    "Perturbation",
    "PerturbationAxis",
    "PerturbationValue",
    "RobustnessSetting",
    "RobustnessSpec",
    "default_states",
    "parse_robustness_text",
]


class PerturbationAxis(StrEnum):
    """LIBERO-plus's seven categories, with the names ``--robustness`` takes."""

    LAYOUT = "layout"  # objects layout: positions inside their regions, distractors
    CAMERA = "camera"  # camera viewpoints: position, orientation, field of view
    ROBOT_INIT = "robot_init"  # robot initial states: the arm's initial joints
    LANGUAGE = "language"  # language instructions: paraphrases, blank or irrelevant instructions
    LIGHT = "light"  # light conditions
    TEXTURE = "texture"  # background textures
    NOISE = "noise"  # sensor noise: image noise, blur


#: In LIBERO-plus's order (its per-category table).
AXES: tuple[PerturbationAxis, ...] = tuple(PerturbationAxis)

#: One drawn parameter: a number, a name (a texture, an instruction's template), or a vector (a position).
PerturbationValue = float | int | SettingText | list[float]


class Perturbation(BaseModel):
    """One episode's perturbation: which axis, how strong, and exactly what was drawn."""

    model_config = ConfigDict(extra="forbid")

    axis: PerturbationAxis
    level: int = Field(ge=0, le=10, description="0 is the unperturbed episode; higher levels are stronger")
    magnitude: float = Field(ge=0, description="The level's size in ``unit`` (e.g. 0.05 m, 10 degrees)")
    unit: Name = Field(description="Unit of ``magnitude``, e.g. m, deg, rad, lux factor, px sigma, words")
    params: dict[Name, PerturbationValue] = Field(
        default_factory=dict, description="What was drawn for this episode, e.g. camera offset, new instruction"
    )
    variant: Name = Field(
        default="",
        description="For a published suite's variant (LIBERO-plus, LIBERO-PRO): the variant's own name",
    )


#: Levels every native axis defines above 0 (their magnitudes and units: :mod:`rlinf_bench.robustness`).
MAX_LEVEL = 3
#: The share of a task's trials whose initial states are also played perturbed, unless ``states`` says:
#: one in ten (5 of LIBERO's 50), at least one.
STATE_SHARE_DIVISOR = 10
#: The named profiles: every axis, at one level (quick) or at all three (full).
PROFILES: dict[str, tuple[int, ...]] = {"quick": (2,), "full": (1, 2, 3)}
#: Profiles whose perturbed initial states each play one (axis, level), taken in turn; the others play every pair.
ROTATING_PROFILES = frozenset({"quick"})
#: What turns robustness off where a profile or axes are expected (``--robustness off``, ``robustness: off``).
OFF_WORDS = frozenset({"", "off", "none", "no", "false"})

Level = Annotated[int, Field(ge=0, le=MAX_LEVEL)]


def default_states(trials: int) -> int:
    """Initial states per task played perturbed when ``states`` is not given: a tenth of the trials, at least 1."""
    return max(1, -(-trials // STATE_SHARE_DIVISOR))


class RobustnessSpec(BaseModel):
    """Which perturbed episodes a run plays beside its standard ones: axes with levels, on the first
    ``states`` initial states of each task (each also played unperturbed: its control twin).

    Written as a profile (``quick``, ``full``), as ``AXIS[:LEVELS],…`` (``camera:1,2,3,light:2``; an axis
    without levels gets all three), or as the object itself (``{axes: {camera: [1, 2]}, states: 10}``).
    ``quick`` plays each perturbed initial state under one (axis, level), taken in turn (about 10 % more
    episodes); ``full`` and ``AXIS[:LEVELS]`` play every perturbed initial state under every (axis, level).
    Level 0 is allowed: it plays the unperturbed episode again, which must equal its twin bit for bit.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: Literal["quick", "full", "custom"] = Field(
        default="custom",
        description="quick: every axis at level 2, one per perturbed initial state in turn; full: every axis at "
        "levels 1-3 on every perturbed initial state; custom: the axes given",
    )
    axes: dict[PerturbationAxis, list[Level]] = Field(
        default_factory=dict, description="Axis -> levels (0-3) to play; filled from the profile when one is named"
    )
    states: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TRIALS,
        description="Initial states per task also played perturbed: the run's first N (at most its trials); "
        "None: a tenth of the trials, at least one",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = parse_robustness_text(data)
        if isinstance(data, dict) and data.get("profile") in PROFILES:
            levels = list(PROFILES[data["profile"]])
            profile_axes = {axis.value: levels for axis in PerturbationAxis}
            given = data.get("axes")
            # a profile's axes written out (a result read back) are the profile's; others are a contradiction
            if given and {str(getattr(k, "value", k)): sorted(v) for k, v in given.items()} != profile_axes:
                raise ValueError(
                    f"robustness: profile {data['profile']!r} and axes both given; give a profile or axes, not both"
                )
            return {**data, "axes": profile_axes}
        return data

    @field_validator("axes")
    @classmethod
    def _levels_sorted(cls, value: dict[PerturbationAxis, list[int]]) -> dict[PerturbationAxis, list[int]]:
        if not value:
            raise ValueError(
                "robustness names no axis: give a profile (quick, full), AXIS[:LEVELS] (e.g. camera:1,2,3), or off"
            )
        empty = [axis.value for axis, levels in value.items() if not levels]
        if empty:
            raise ValueError(f"robustness: axis {', '.join(empty)} has no levels; give levels 0-{MAX_LEVEL}")
        # LIBERO-plus's order of axes, each with its distinct levels in order: one spec, one canonical form
        return {axis: sorted(set(value[axis])) for axis in AXES if axis in value}

    @property
    def rotates(self) -> bool:
        """Whether each perturbed initial state plays one (axis, level) (quick) rather than every pair."""
        return self.profile in ROTATING_PROFILES

    def pairs(self) -> list[tuple[PerturbationAxis, int]]:
        """Every (axis, level) this spec plays, in LIBERO-plus's order of axes, levels ascending."""
        return [(axis, level) for axis, levels in self.axes.items() for level in levels]

    def perturbed_states(self, trials: int) -> int:
        """Initial states per task that are played perturbed in a run of ``trials`` trials per task."""
        return min(self.states or default_states(trials), trials)

    def task_plan(self, task_id: int, trials: int) -> list[tuple[int, PerturbationAxis, int]]:
        """(initial state, axis, level) of every perturbed episode of task ``task_id``, in play order.

        A rotating profile gives initial state ``i`` the pair ``(task_id * states + i) mod pairs``: by task id,
        not by the task's place in the run, so a shard of a run plays the same pairs as the whole run."""
        states = self.perturbed_states(trials)
        pairs = self.pairs()
        if self.rotates:
            return [(i, *pairs[(task_id * states + i) % len(pairs)]) for i in range(states)]
        return [(i, axis, level) for i in range(states) for axis, level in pairs]

    def episodes_per_task(self, trials: int) -> int:
        """Perturbed episodes each task adds to a run of ``trials`` trials per task."""
        states = self.perturbed_states(trials)
        return states if self.rotates else states * len(self.pairs())

    def text(self) -> str:
        """The ``--robustness`` form of this spec (the profile's name when it is one), with its states."""
        name = (
            self.profile
            if self.profile in PROFILES
            else ",".join(f"{axis.value}:{','.join(map(str, levels))}" for axis, levels in self.axes.items())
        )
        return name if self.states is None else f"{name} on {self.states} initial states"


def _off_is_none(value: Any) -> Any:
    if value is False or (isinstance(value, str) and value.strip().lower() in OFF_WORDS):
        return None
    return value


#: A matrix's or a run's ``robustness``: None (off, the default), or the spec (from its text or object).
RobustnessSetting = Annotated[RobustnessSpec | None, BeforeValidator(_off_is_none)]


def parse_robustness_text(text: str) -> dict[str, Any]:
    """``quick``, ``full`` or ``AXIS[:LEVELS],…`` as RobustnessSpec fields; ValueError names the bad part."""
    words = text.strip().lower()
    if words in PROFILES:
        return {"profile": words}
    axes: dict[str, list[int]] = {}
    current: str | None = None
    for part in (p.strip() for p in words.split(",")):
        if not part:
            continue
        name, colon, level = part.partition(":")
        if _digits(part) and current is not None:
            axes[current].append(int(part))
            continue
        if name not in {a.value for a in AXES}:
            raise ValueError(
                f"robustness {text!r}: {name!r} is no axis or profile; axes: {', '.join(a.value for a in AXES)}; "
                f"profiles: {', '.join(PROFILES)}; off turns it off (e.g. camera:1,2,3,light:2)"
            )
        current = name
        if colon and not _digits(level):
            raise ValueError(f"robustness {text!r}: level {level!r} of {name} is not a number 0-{MAX_LEVEL}")
        axes.setdefault(name, []).extend([int(level)] if colon else list(PROFILES["full"]))
    return {"axes": axes}


def _digits(text: str) -> bool:
    # ASCII digits only: "²" or "٣" pass str.isdigit() and then break int()
    return text.isascii() and text.isdigit()


class FailureReason(StrEnum):
    """Why an episode failed, from the simulator state; the first that applies, in this order of checks."""

    NEVER_REACHED = "never_reached"  # the gripper never came near the object the goal needs
    GRASP_FAILED = "grasp_failed"  # reached and closed, but never held the object
    WRONG_OBJECT = "wrong_object"  # held an object the goal does not move
    DROPPED = "dropped"  # held the goal's object, then lost it away from the target
    WRONG_TARGET = "wrong_target"  # placed the goal's object, but not where the goal wants it
    KNOCKED_OVER = "knocked_over"  # toppled or pushed the goal's target or object out of place
    TIMEOUT_HOLDING = "timeout_holding"  # still holding the goal's object when the steps ran out
    UNDONE = "undone"  # the goal held at some step, then stopped holding
    TIMEOUT = "timeout"  # none of the above: the steps ran out (e.g. articulated goals half done)
    ERROR = "error"  # the simulator failed (the episode's ``error``)


#: A reason with its evidence, e.g. "dropped at step 143, 0.21 m from the basket".
FailureDetail = Annotated[str, Field(max_length=512)]
