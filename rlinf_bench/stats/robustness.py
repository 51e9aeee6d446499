"""Robustness of one suite's runs: each perturbed episode against its control twin, per axis and level, and the
per-category table in LIBERO-plus's layout (docs/robustness.md, "Statistics").

A perturbed episode's twin is the standard episode of the same task and initial state in the same run: the
pair shares everything but the perturbation, so the drop (control - perturbed) is measured on the same states,
and the (task, initial state) cluster is the unit of every interval, as for the success rate. A perturbed
episode whose twin is missing (a crashed control) is counted apart and left out.

The published robustness suites (LIBERO-plus, LIBERO-PRO) need no pairing here: their tasks are variants, each
with a published category, so their row of the category table is the success rate over each category's tasks.
Which category a (suite, task) has is the catalogue's to say: :data:`CategoryOf`, given to :func:`robustness_section`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rlinf_bench.contracts import EpisodeResult, FailureReason, PerturbationAxis, RunResult
from rlinf_bench.contracts.robustness_report import (
    CategoryRate,
    PerturbedOutcome,
    PerturbedVideo,
    RobustnessLevel,
    RobustnessSection,
)
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.published_suites import category_of as published_category_of
from rlinf_bench.stats.intervals import clustered_interval, paired_difference

__all__ = [
    "TABLE_COLUMNS",
    "CategoryOf",
    "catalogue_categories",
    "category_order",
    "level_rows",
    "no_published_categories",
    "perturbed_outcomes",
    "robustness_section",
]

#: A (suite, task id) -> the published category of that task (an axis name such as ``camera``, or a published
#: suite's own kind), None for a task of a suite without categories. The catalogue provides it
#: (:func:`catalogue_categories`); tests pass their own.
CategoryOf = Callable[[str, int], "str | None"]

#: LIBERO-plus's per-category table: its columns in its order, with its headings (the leaderboard of its README).
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    (PerturbationAxis.CAMERA.value, "Camera"),
    (PerturbationAxis.ROBOT_INIT.value, "Robot"),
    (PerturbationAxis.LANGUAGE.value, "Language"),
    (PerturbationAxis.LIGHT.value, "Light"),
    (PerturbationAxis.TEXTURE.value, "Background"),
    (PerturbationAxis.NOISE.value, "Noise"),
    (PerturbationAxis.LAYOUT.value, "Layout"),
)
_TABLE_RANK = {name: i for i, (name, _) in enumerate(TABLE_COLUMNS)}


def no_published_categories(suite: str, task_id: int) -> str | None:
    """No task of any suite has a published category."""
    return None


def catalogue_categories() -> CategoryOf:
    """The catalogue's published categories of the robustness suites' variants.

    The one place the aggregation learns them: LIBERO-plus's seven and LIBERO-PRO's kinds
    (:func:`rlinf_bench.published_suites.category_of`); every other suite has none.
    """
    return published_category_of


def category_order(names: Iterable[str]) -> list[str]:
    """LIBERO-plus's seven in its table's order, then any other category (a published suite's own kinds) by name."""
    return sorted(set(names), key=lambda n: (_TABLE_RANK.get(n, len(_TABLE_RANK)), n))


@dataclass
class _Cell:
    """The paired episodes of one (task, initial state, axis, level), gathered over runs."""

    magnitude: float
    unit: str
    trials: int = 0
    successes: int = 0
    control_successes: int = 0
    unpaired: int = 0
    seeds: list[int] = field(default_factory=list)
    reasons: Counter[FailureReason] = field(default_factory=Counter)
    videos: list[PerturbedVideo] = field(default_factory=list)


def _add(
    cells: dict[tuple[int, int, PerturbationAxis, int], _Cell],
    task_id: int,
    e: EpisodeResult,
    twin: EpisodeResult | None,
    run_index: int,
) -> None:
    p = e.perturbation
    if p is None:  # TaskResult refuses it; a guard for the type checker
        raise ResultsMismatchError(f"task {task_id}: a perturbed episode without its perturbation")
    key = (task_id, e.init_state, p.axis, p.level)
    cell = cells.setdefault(key, _Cell(p.magnitude, p.unit))
    if (cell.magnitude, cell.unit) != (p.magnitude, p.unit):
        raise ResultsMismatchError(
            f"task {task_id} state {e.init_state}: {p.axis.value} level {p.level} is {cell.magnitude:g} {cell.unit} in "
            f"one run and {p.magnitude:g} {p.unit} in another; aggregate runs of one robustness profile"
        )
    if e.video:  # shown whether or not its twin is there
        cell.videos.append(
            PerturbedVideo(run_index=run_index, success=e.success, video=e.video, failure_reason=e.failure_reason)
        )
    if twin is None:
        cell.unpaired += 1
        return
    cell.trials += 1
    cell.successes += e.success
    cell.control_successes += twin.success
    cell.seeds.append(e.seed)
    if not e.success and e.failure_reason is not None:
        cell.reasons[e.failure_reason] += 1


def perturbed_outcomes(completed: Sequence[RunResult]) -> list[PerturbedOutcome]:
    """Every (task, initial state, axis, level) of the completed runs, each perturbed episode with its twin."""
    cells: dict[tuple[int, int, PerturbationAxis, int], _Cell] = {}
    for run in sorted(completed, key=lambda r: r.run_index):
        for task in run.tasks:
            twins = {e.init_state: e for e in task.episodes}
            for e in task.perturbed:
                _add(cells, task.task_id, e, twins.get(e.init_state), run.run_index)
    return [
        PerturbedOutcome(
            task_id=task_id,
            init_state=state,
            axis=axis,
            level=level,
            magnitude=c.magnitude,
            unit=c.unit,
            trials=c.trials,
            successes=c.successes,
            control_successes=c.control_successes,
            unpaired=c.unpaired,
            seeds=sorted(c.seeds),
            reasons=dict(sorted(c.reasons.items())),
            videos=c.videos,
        )
        for (task_id, state, axis, level), c in sorted(cells.items(), key=lambda kv: (_axis_rank(kv[0][2]), kv[0]))
    ]


def _axis_rank(axis: str) -> tuple[int, str]:
    return _TABLE_RANK.get(axis, len(_TABLE_RANK)), axis


def level_rows(outcomes: Sequence[PerturbedOutcome]) -> list[RobustnessLevel]:
    """Per axis and level: the perturbed rate (clustered interval), the control's on the same pairs, and the
    paired drop with its interval and one-sided p (docs/robustness.md)."""
    groups: dict[tuple[PerturbationAxis, int], list[PerturbedOutcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.axis, o.level)].append(o)
    rows = []
    for (axis, level), group in sorted(groups.items(), key=lambda kv: (_axis_rank(kv[0][0]), kv[0][1])):
        paired = [o for o in group if o.trials > 0]
        unpaired = sum(o.unpaired for o in group)
        if not paired:
            continue
        trials = [o.trials for o in paired]
        ci = clustered_interval([o.successes for o in paired], trials)
        drop = paired_difference([o.control_successes for o in paired], [o.successes for o in paired], trials)
        n = sum(trials)
        control = sum(o.control_successes for o in paired)
        rows.append(
            RobustnessLevel(
                axis=axis,
                level=level,
                magnitude=paired[0].magnitude,
                unit=paired[0].unit,
                episodes=n,
                clusters=len(paired),
                successes=ci.successes,
                success_rate=ci.rate,
                ci95_low=ci.low,
                ci95_high=ci.high,
                control_successes=control,
                control_success_rate=control / n,
                drop=drop.estimate,
                drop_ci95_low=drop.low,
                drop_ci95_high=drop.high,
                p_value=drop.p_positive,
                unpaired=unpaired,
            )
        )
    return rows


Source = Literal["native", "published"]


def _rate(category: str, source: Source, episodes: int, successes: int, tasks: Sequence[int] = ()) -> CategoryRate:
    return CategoryRate(
        category=category,
        source=source,
        episodes=episodes,
        successes=successes,
        success_rate=successes / episodes if episodes else 0.0,
        tasks=sorted(tasks),
    )


def _native_categories(outcomes: Sequence[PerturbedOutcome]) -> list[CategoryRate]:
    per_axis: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for o in outcomes:
        per_axis[o.axis.value][0] += o.trials
        per_axis[o.axis.value][1] += o.successes
    return [_rate(a, "native", per_axis[a][0], per_axis[a][1]) for a in category_order(per_axis) if per_axis[a][0]]


def _published_categories(completed: Sequence[RunResult], suite: str, category_of: CategoryOf) -> list[CategoryRate]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    tasks: dict[str, set[int]] = defaultdict(set)
    for run in completed:
        for task in run.tasks:
            category = category_of(suite, task.task_id)
            if category is None:
                continue
            counts[category][0] += len(task.episodes)
            counts[category][1] += task.successes
            tasks[category].add(task.task_id)
    return [
        _rate(c, "published", counts[c][0], counts[c][1], sorted(tasks[c]))
        for c in category_order(counts)
        if counts[c][0]
    ]


def _totals(categories: Sequence[CategoryRate]) -> list[CategoryRate]:
    out = []
    sources: tuple[Source, ...] = ("native", "published")
    for source in sources:
        these = [c for c in categories if c.source == source]
        if these:
            out.append(_rate("total", source, sum(c.episodes for c in these), sum(c.successes for c in these)))
    return out


def robustness_section(
    completed: Sequence[RunResult], suite: str, category_of: CategoryOf | None = None
) -> RobustnessSection | None:
    """The suite's robustness from its completed runs; None when they hold no perturbed episode and no task of
    the suite has a published category (``category_of``, default: :func:`catalogue_categories`)."""
    outcomes = perturbed_outcomes(completed)
    categories = _native_categories(outcomes) + _published_categories(
        completed, suite, category_of or catalogue_categories()
    )
    if not outcomes and not categories:
        return None
    return RobustnessSection(
        levels=level_rows(outcomes),
        states=outcomes,
        categories=categories,
        totals=_totals(categories),
        unpaired=sum(o.unpaired for o in outcomes),
    )
