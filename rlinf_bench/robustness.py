"""The native robustness axes: what each level of each axis is, in units, and what a spec costs in episodes.

A level is one magnitude with a unit (:class:`AxisScale`); level 0 of every axis is the unperturbed
episode. The worker side applies them (``eval_runner.perturbations``); the Plan, sharding and
``evaluate`` count the perturbed episodes a spec adds (:func:`perturbed_episodes`), and docs/robustness.md
lists the same table.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlinf_bench.contracts.request import EvalMatrix
from rlinf_bench.contracts.robustness import MAX_LEVEL, Perturbation, PerturbationAxis, RobustnessSpec
from rlinf_bench.suites import get_suite, resolve_task_ids

__all__ = [
    "AXIS_SCALES",
    "AxisScale",
    "RobustnessBudget",
    "matrix_budget",
    "perturbation_record",
    "perturbed_episodes",
]


@dataclass(frozen=True)
class AxisScale:
    """One axis's levels 1..3: their magnitudes in ``unit``, and what the magnitude measures."""

    unit: str
    magnitudes: tuple[float, float, float]
    measures: str
    #: a name per level where the level is a kind rather than an amount (language)
    names: tuple[str, str, str] | None = None

    def magnitude(self, level: int) -> float:
        """The magnitude of ``level`` (0: none)."""
        if not 0 <= level <= MAX_LEVEL:
            raise ValueError(f"level {level} is not one of 0-{MAX_LEVEL}")
        return 0.0 if level == 0 else float(self.magnitudes[level - 1])


#: Every axis's scale, in LIBERO-plus's order (docs/robustness.md, "Axes and levels", says the same).
AXIS_SCALES: dict[PerturbationAxis, AxisScale] = {
    PerturbationAxis.LAYOUT: AxisScale(
        "m",
        (0.03, 0.06, 0.10),
        "margin around each movable object's BDDL region it is placed in; 1, 2, 3 distractors added",
    ),
    PerturbationAxis.CAMERA: AxisScale(
        "deg", (5.0, 10.0, 20.0), "rotation of the world-fixed cameras about the point they look at"
    ),
    PerturbationAxis.ROBOT_INIT: AxisScale(
        "rad", (0.1, 0.3, 0.5), "length of the arm's initial joint-angle offset (its norm over the 7 joints)"
    ),
    PerturbationAxis.LANGUAGE: AxisScale(
        "rewrite", (1.0, 2.0, 3.0), "kind of rewrite of the instruction", ("paraphrase", "blank", "irrelevant")
    ),
    PerturbationAxis.LIGHT: AxisScale(
        "stops", (0.5, 1.0, 1.5), "brightness change of the scene's lights (x2 per stop)"
    ),
    PerturbationAxis.TEXTURE: AxisScale(
        "surfaces", (1.0, 2.0, 3.0), "surfaces retextured: walls, then the floor, then the table"
    ),
    PerturbationAxis.NOISE: AxisScale(
        "intensity", (4.0, 8.0, 16.0), "standard deviation of the images' Gaussian noise, in 8-bit levels"
    ),
}


def perturbation_record(
    axis: PerturbationAxis, level: int, params: dict[str, float | int | str | list[float]] | None = None
) -> Perturbation:
    """The :class:`Perturbation` an episode records: the level's magnitude and unit, with what was drawn."""
    scale = AXIS_SCALES[axis]
    return Perturbation(
        axis=axis, level=level, magnitude=scale.magnitude(level), unit=scale.unit, params=dict(params or {})
    )


def perturbed_episodes(spec: RobustnessSpec | None, tasks: int, trials: int) -> int:
    """Perturbed episodes a run of ``tasks`` tasks x ``trials`` trials plays under ``spec`` (0 when off)."""
    return 0 if spec is None else tasks * spec.episodes_per_task(trials)


@dataclass(frozen=True)
class RobustnessBudget:
    """What a matrix's robustness costs: its perturbed episodes beside its standard ones, over all runs."""

    spec: RobustnessSpec | None
    standard: int
    perturbed: int

    def line(self) -> str:
        """One sentence for the Plan and ``evaluate``: e.g. ``robustness quick: +1,400 perturbed episodes
        (35 per task and run; the standard episodes are 4,000, so +35 %)``."""
        if self.spec is None:
            return f"robustness off: {self.standard:,} standard episodes"
        share = self.perturbed / self.standard if self.standard else 0.0
        return (
            f"robustness {self.spec.text()}: +{self.perturbed:,} perturbed episodes beside {self.standard:,} "
            f"standard ones (+{share:.0%})"
        )


def matrix_budget(matrix: EvalMatrix) -> RobustnessBudget:
    """The standard and perturbed episodes of every run of ``matrix`` (suites x runs)."""
    standard = perturbed = 0
    for selection in matrix.suites:
        tasks = len(resolve_task_ids(get_suite(selection.name), selection.tasks))
        standard += tasks * matrix.trials_per_task * matrix.runs
        perturbed += perturbed_episodes(matrix.robustness, tasks, matrix.trials_per_task) * matrix.runs
    return RobustnessBudget(matrix.robustness, standard, perturbed)
