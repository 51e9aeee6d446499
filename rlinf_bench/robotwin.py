"""RoboTwin 2.0 facts the whole package shares: the runtime's task table and the brief's horizon groups.

Nothing here imports the RoboTwin runtime (it lives in its own venv and image). The task table is a
copy of the runtime's own step-limit config (``rlinf_bench/data/robotwin/tasks.yaml``) and the horizon
groups come from the baselines file, next to the tables they explain; tests/robotwin checks both
against the installed runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from rlinf_bench.errors import ConfigError, UnknownSuiteError
from rlinf_bench.registry import Registry

__all__ = [
    "GROUP_ORDER",
    "MAX_RUN_SEED",
    "OFFICIAL_EPISODES_PER_TASK",
    "SEED_STRIDE",
    "SUITE_PREFIX",
    "HorizonGroup",
    "check_groups_consistent",
    "group_of_task",
    "horizon_columns",
    "horizon_groups",
    "robotwin_group_suites",
    "step_limit",
    "suite_tasks",
    "task_names",
]

#: ``robotwin/<task>`` names a one-task suite of any runtime task; ``robotwin_<group>`` a horizon group.
SUITE_PREFIX = "robotwin"
#: Order in which reports list the groups (the brief's table order).
GROUP_ORDER = ("short", "medium", "long", "extra_long")
#: The official protocol evaluates 100 episodes per task.
OFFICIAL_EPISODES_PER_TASK = 100
#: Official seeds: run ``s`` starts at ``SEED_STRIDE * (1 + s)`` (upstream ``script/eval_policy.py``).
SEED_STRIDE = 100_000
#: The largest run seed whose episode seeds (``SEED_STRIDE * (1 + s)`` and the walk above it, within one stride)
#: stay within the simulator's seeding range, 0 to 2**32 - 1.
MAX_RUN_SEED = 2**32 // SEED_STRIDE - 2


@dataclass(frozen=True)
class HorizonGroup:
    """One horizon group of the brief: its tasks with their average expert trajectory length."""

    name: str
    steps: tuple[int, int]
    tasks: dict[str, int]


def _yaml(package: str, name: str) -> Any:
    return yaml.safe_load(resources.files(package).joinpath(name).read_text(encoding="utf-8"))


@cache
def _step_limits() -> Registry[int]:
    data = _yaml("rlinf_bench.data.robotwin", "tasks.yaml")
    limits: Registry[int] = Registry("RoboTwin task", error=UnknownSuiteError, sort=True)
    for task, limit in data["step_limits"].items():
        limits.register(str(task), value=int(limit))
    return limits


@cache
def _horizon_doc() -> dict[str, Any]:
    doc: dict[str, Any] = _yaml("rlinf_bench.data.baselines", "robotwin.yaml")["horizon_groups"]
    return doc


def task_names() -> list[str]:
    """All 50 task names of the pinned runtime, sorted."""
    return _step_limits().names()


def step_limit(task: str) -> int:
    """The runtime's evaluation step limit for ``task`` (its ``_eval_step_limit.yml``)."""
    return _step_limits().get(task)


def horizon_groups() -> dict[str, HorizonGroup]:
    """The four horizon groups (short, medium, long, extra_long), in the brief's order."""
    groups = _horizon_doc()["groups"]
    return {
        name: HorizonGroup(
            name=name,
            steps=(int(groups[name]["steps"][0]), int(groups[name]["steps"][1])),
            tasks={str(t): int(s) for t, s in groups[name]["tasks"].items()},
        )
        for name in GROUP_ORDER
    }


def horizon_columns() -> dict[str, list[str]]:
    """The brief's baseline columns (suite ids such as ``robotwin_long_xl``) and the groups each pools."""
    return {str(k): [str(g) for g in v] for k, v in _horizon_doc()["columns"].items()}


def group_of_task(task: str) -> str | None:
    """The horizon group of ``task``, or None for a task outside the brief's twelve."""
    for group in horizon_groups().values():
        if task in group.tasks:
            return group.name
    return None


def robotwin_group_suites() -> dict[str, list[str]]:
    """Suite id -> its tasks for every RoboTwin group suite, in the brief's order.

    ``robotwin`` is all twelve tasks of the brief, ``robotwin_<group>`` one horizon group, and
    ``robotwin_long_xl`` the brief's merged long + extra-long column.
    """
    groups = horizon_groups()
    suites = {SUITE_PREFIX: [t for g in groups.values() for t in g.tasks]}
    suites.update({f"{SUITE_PREFIX}_{name}": list(g.tasks) for name, g in groups.items()})
    for column, members in horizon_columns().items():
        suites.setdefault(column, [t for m in members for t in groups[m].tasks])
    return suites


def suite_tasks(name: str) -> list[str]:
    """The task names of a RoboTwin suite, in task-id order; a clear error for unknown names."""
    if name.startswith(f"{SUITE_PREFIX}/"):
        task = name.split("/", 1)[1]
        step_limit(task)  # raises with the closest task name
        return [task]
    also = f", or robotwin/<task> for one of the runtime's {len(task_names())} tasks"
    suites: Registry[list[str]] = Registry("RoboTwin suite", error=UnknownSuiteError, also=also)
    for suite, tasks in robotwin_group_suites().items():
        suites.register(suite, value=tasks)
    return suites.get(name)


def check_groups_consistent() -> None:
    """Raise :class:`ConfigError` if a grouped task is not a runtime task (a packaging bug)."""
    unknown = [t for g in horizon_groups().values() for t in g.tasks if t not in _step_limits()]
    if unknown:
        raise ConfigError(f"robotwin.yaml horizon_groups names tasks the runtime lacks: {unknown}")
