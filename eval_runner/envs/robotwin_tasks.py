"""RoboTwin tasks as the installed runtime defines them: env modules, step limits and instructions.

Read from the runtime's files without importing a task module (those import SAPIEN): the env classes
are found by parsing ``robotwin/envs/<task>.py``, the step limits come from the runtime's
``_eval_step_limit`` config and the instructions from ``description/task_instruction/<task>.json``.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from rlinf_bench import robotwin as facts
from rlinf_bench.errors import SimulatorError

__all__ = ["RoboTwinTask", "runtime_step_limits", "runtime_task_names", "suite_tasks", "task_info"]

# Modules of robotwin/envs that are not tasks.
_NOT_TASKS = frozenset({"vector_env", "reward"})


@dataclass(frozen=True)
class RoboTwinTask:
    """One task of a RoboTwin suite."""

    suite: str
    task_id: int
    name: str
    language: str
    step_limit: int
    seen_instructions: tuple[str, ...] = field(default=(), repr=False)
    unseen_instructions: tuple[str, ...] = field(default=(), repr=False)


def _defines_class(source: str, name: str) -> bool:
    return any(isinstance(node, ast.ClassDef) and node.name == name for node in ast.parse(source).body)


@cache
def runtime_task_names() -> tuple[str, ...]:
    """Every task the runtime ships: a ``robotwin/envs/<task>.py`` defining class ``<task>``, sorted."""
    try:
        envs = resources.files("robotwin.envs")
    except ModuleNotFoundError as exc:
        raise SimulatorError(
            "the RoboTwin runtime is not installed here: run RoboTwin suites with .venv-robotwin/bin/python "
            "(`make setup-robotwin`) or in the RoboTwin eval image"
        ) from exc
    names = []
    for entry in envs.iterdir():
        stem = entry.name.removesuffix(".py")
        is_module = entry.name.endswith(".py") and not stem.startswith("_") and stem not in _NOT_TASKS
        if is_module and _defines_class(entry.read_text(encoding="utf-8"), stem):
            names.append(stem)
    return tuple(sorted(names))


@cache
def runtime_step_limits() -> dict[str, int]:
    """The runtime's evaluation step limit per task (``configs/task/_eval_step_limit.yml``)."""
    from robotwin.config import load_task_config

    return {str(k): int(v) for k, v in load_task_config("_eval_step_limit").items()}


def _instructions(task: str) -> dict[str, object]:
    path = resources.files("robotwin.description").joinpath("task_instruction", f"{task}.json")
    if not path.is_file():
        raise SimulatorError(f"the RoboTwin runtime has no instructions for task {task!r} ({path})")
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def task_info(suite: str, task_id: int, name: str) -> RoboTwinTask:
    """One task, read from the runtime; unknown names raise :class:`SimulatorError`."""
    if name not in runtime_task_names():
        raise SimulatorError(f"the installed RoboTwin runtime has no task {name!r}")
    limits = runtime_step_limits()
    if name not in limits:
        raise SimulatorError(f"the RoboTwin runtime's _eval_step_limit config has no entry for {name!r}")
    data = _instructions(name)
    seen, unseen = data.get("seen", []), data.get("unseen", [])
    return RoboTwinTask(
        suite=suite,
        task_id=task_id,
        name=name,
        language=str(data.get("full_description", name.replace("_", " "))),
        step_limit=limits[name],
        seen_instructions=tuple(str(s) for s in seen) if isinstance(seen, list) else (),
        unseen_instructions=tuple(str(s) for s in unseen) if isinstance(unseen, list) else (),
    )


def suite_tasks(suite: str) -> list[RoboTwinTask]:
    """The tasks of a RoboTwin suite (``robotwin``, ``robotwin_<group>``, ``robotwin/<task>``), in id order."""
    return [task_info(suite, i, name) for i, name in enumerate(facts.suite_tasks(suite))]
