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
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.limits import Name, SettingText

__all__ = [
    "AXES",
    "FailureReason",
    "Perturbation",
    "PerturbationAxis",
    "PerturbationValue",
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
