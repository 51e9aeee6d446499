"""The layout axis's distractors: objects of the installed LIBERO assets added to a task's scene.

A scene with distractors is the task's BDDL file rewritten with the distractors in its ``(:objects ...)``,
one region of the workspace where LIBERO's reset puts them first (``distractor_region``, :data:`RESET_AREA`,
wide so that its placement sampler always finds room) and an ``(On distractor region)`` per distractor in its
``(:init ...)``: the idea of LIBERO-plus's "add object" variants. The layout then draws each distractor's
place in :func:`distractor_area`, among the task's own objects. The scene is built once
per (task, level) in a worker and started from the control twin's state: every body and joint the two scenes
share is set as the twin has it (:func:`snapshot`, :func:`restore`), so the scene differs from the twin's only
by the distractors, which the layout then places (:mod:`.physical`).
"""

from __future__ import annotations

import functools
import importlib
import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eval_runner.perturbations.draw import AxisLevel, scene_generator

if TYPE_CHECKING:
    from eval_runner.env import LiberoEnv
    from rlinf_bench.suites import TaskInfo

__all__ = [
    "DISTRACTORS_PER_LEVEL",
    "DistractorScene",
    "DistractorScenes",
    "DistractorSet",
    "SceneSnapshot",
    "distractor_bddl",
    "draw_distractors",
    "grocery_categories",
    "installed_groceries",
    "restore",
    "snapshot",
]

#: Distractors added at layout levels 1, 2, 3.
DISTRACTORS_PER_LEVEL = (1, 2, 3)
#: The distractors' region is at least this wide and deep (m), centred on the objects' regions.
MIN_AREA_M = 0.3
REGION = "distractor_region"
#: The distractors' region in the BDDL file (x0, y0, x1, y1, m, relative to the workspace): where LIBERO's reset
#: places them before the layout draws their places.
RESET_AREA = (-0.3, -0.3, 0.3, 0.3)
#: Seeds tried for the build of a scene with distractors (LIBERO's reset at the build gives up on a crowded draw).
BUILD_TRIES = 10
#: The module (in LIBERO and in its forks) of LIBERO's object registry whose objects are distractors: the
#: grocery items (HOPE objects), small, graspable and standing on their own, as in LIBERO-Object's scenes.
GROCERY_MODULE = ".envs.objects.hope_objects"

#: MuJoCo joint type -> (qpos width, dof width): free, ball, slide, hinge
_JOINT_WIDTHS = {0: (7, 6), 1: (4, 3), 2: (1, 1), 3: (1, 1)}


def grocery_categories(objects_dict: dict[str, Any]) -> list[str]:
    """The distractor categories among LIBERO's registered objects (``OBJECTS_DICT``) whose model files the
    installed assets hold (some registered ones have none), sorted."""
    out = []
    for name, cls in sorted(objects_dict.items()):
        if not cls.__module__.endswith(GROCERY_MODULE):
            continue
        try:
            cls(name=f"{name}_probe")
        except OSError:  # the category's XML is not installed
            continue
        out.append(name)
    return out


@functools.cache
def installed_groceries(package: str) -> tuple[str, ...]:
    """:func:`grocery_categories` of LIBERO build ``package`` (``libero``, ``liberoplus``, ...): the model files
    are probed once per process, not at every scene with distractors."""
    registry = importlib.import_module(f"{package}.{package}.envs.base_object").OBJECTS_DICT
    return tuple(grocery_categories(registry))


@dataclass(frozen=True)
class DistractorSet:
    """The distractors of one (task, level): their object names (``<category>_1``) and categories."""

    categories: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"{category}_1" for category in self.categories)


def draw_distractors(rng: np.random.Generator, available: list[str], in_scene: set[str], count: int) -> DistractorSet:
    """``count`` categories drawn without replacement from ``available``, none of the scene's own."""
    pool = [category for category in available if category not in in_scene]
    if len(pool) < count:
        raise ValueError(f"{count} distractors asked for, {len(pool)} grocery categories not in the scene")
    picked = rng.choice(len(pool), size=count, replace=False)
    return DistractorSet(tuple(sorted(pool[int(i)] for i in picked)))


def distractor_area(problem: dict[str, Any], workspace: str) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) relative to the workspace, as BDDL ranges are: the box around the workspace regions
    where the task's movable objects start, grown to at least :data:`MIN_AREA_M` on a side."""
    regions = problem["regions"]
    objects = {name for names in problem["objects"].values() for name in names}
    boxes = [
        regions[p[2]]["ranges"][0]
        for p in problem["initial_state"]
        if len(p) == 3 and p[1] in objects and p[2] in regions and regions[p[2]].get("target") == workspace
        if regions[p[2]].get("ranges")
    ]
    if not boxes:
        boxes = [[-MIN_AREA_M / 2, -MIN_AREA_M / 2, MIN_AREA_M / 2, MIN_AREA_M / 2]]
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    grow_x, grow_y = max(0.0, MIN_AREA_M - (x1 - x0)) / 2, max(0.0, MIN_AREA_M - (y1 - y0)) / 2
    return (x0 - grow_x, y0 - grow_y, x1 + grow_x, y1 + grow_y)


def distractor_bddl(text: str, workspace: str, extra: DistractorSet) -> str:
    """The BDDL ``text`` with ``extra``'s objects added in :data:`REGION` (see the module docstring)."""
    x0, y0, x1, y1 = RESET_AREA
    region = (
        f"\n      ({REGION}\n          (:target {workspace})\n"
        f"          (:ranges (\n              ({x0:.6f} {y0:.6f} {x1:.6f} {y1:.6f})\n            )\n          )\n      )"
    )
    objects = "".join(
        f"\n    {name} - {category}" for name, category in zip(extra.names, extra.categories, strict=True)
    )
    init = "".join(f"\n    (On {name} {workspace}_{REGION})" for name in extra.names)
    for section, added in (("regions", region), ("objects", objects), ("init", init)):
        found = re.search(rf"\(:{section}\b", text, flags=re.I)
        if found is None:
            raise ValueError(f"the BDDL file has no (:{section} ...) section to add distractors to")
        text = text[: found.end()] + added + text[found.end() :]
    return text


@dataclass(frozen=True)
class SceneSnapshot:
    """A scene's state by name: each body's placement, each joint's position and velocity."""

    bodies: dict[str, tuple[np.ndarray, np.ndarray]]
    joints: dict[str, tuple[np.ndarray, np.ndarray]]


def snapshot(sim: Any) -> SceneSnapshot:
    """The state of robosuite's MjSim ``sim`` as it is now."""
    model, data = sim.model._model, sim.data
    bodies = {model.body(b).name: (model.body_pos[b].copy(), model.body_quat[b].copy()) for b in range(model.nbody)}
    joints = {}
    for j in range(model.njnt):
        nq, nv = _JOINT_WIDTHS[int(model.jnt_type[j])]
        q, v = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        joints[model.joint(j).name] = (data.qpos[q : q + nq].copy(), data.qvel[v : v + nv].copy())
    return SceneSnapshot(bodies, joints)


def restore(state: SceneSnapshot, sim: Any) -> None:
    """Set every body and joint of ``sim`` that ``state`` names as ``state`` has it; the rest stays."""
    model, data = sim.model._model, sim.data
    for b in range(model.nbody):
        placed = state.bodies.get(model.body(b).name)
        if placed is not None:
            model.body_pos[b], model.body_quat[b] = placed
    for j in range(model.njnt):
        held = state.joints.get(model.joint(j).name)
        if held is not None:
            q, v = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
            data.qpos[q : q + len(held[0])] = held[0]
            data.qvel[v : v + len(held[1])] = held[1]


@dataclass(frozen=True)
class DistractorScene:
    """A task's scene with the distractors of one level, and where the layout draws their places (x0, y0, x1,
    y1 in the world)."""

    env: LiberoEnv
    distractors: DistractorSet
    area: tuple[float, float, float, float]


class DistractorScenes:
    """The scene with distractors of the (task, level) a worker's scene plays now: built on first use (a scene
    build, seconds) and kept while episodes ask for the same one; the previous one is closed."""

    def __init__(self) -> None:
        self.current: tuple[tuple[int, int], DistractorScene] | None = None
        self.folder: Path | None = None

    def scene(self, env: LiberoEnv, seed: int, suite: str, axis: AxisLevel) -> DistractorScene:
        """``env``'s task with the distractors of ``axis``'s level, drawn from (run seed, suite, task, level)."""
        key = (seed, axis.level)
        if self.current is not None and self.current[0] == key:
            return self.current[1]
        self.close()
        task = env.task
        domain = env.raw_env.env
        problem = domain.parsed_problem
        rng = scene_generator(seed, suite, task.task_id, axis)
        extra = draw_distractors(
            rng, list(installed_groceries(task.package)), set(problem["objects"]), DISTRACTORS_PER_LEVEL[axis.level - 1]
        )
        workspace = str(domain.workspace_name)
        self.folder = Path(tempfile.mkdtemp(prefix="rlinf-distractors-"))
        bddl = self.folder / f"{task.bddl_file.stem}_distractors_{axis.level}.bddl"
        bddl.write_text(distractor_bddl(task.bddl_file.read_text(), workspace, extra))
        built = _build(replace(task, bddl_file=bddl), env, rng)
        x0, y0, x1, y1 = distractor_area(problem, workspace)
        dx, dy = (float(v) for v in tuple(getattr(domain, "workspace_offset", (0.0, 0.0, 0.0)))[:2])
        scene = DistractorScene(built, extra, (x0 + dx, y0 + dy, x1 + dx, y1 + dy))
        self.current = (key, scene)
        return scene

    def close(self) -> None:
        """Close the scene held, and remove its BDDL file."""
        if self.current is not None:
            self.current[1].env.close()
            self.current = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def _build(task: TaskInfo, like: LiberoEnv, rng: np.random.Generator) -> LiberoEnv:
    """``task``'s scene, rendered as ``like``. The build resets the scene from numpy's global RNG, seeded from
    ``rng`` here (and the reference chain restored after); a seed with which LIBERO's placement sampler finds
    no room for every object is replaced by the next one, at most :data:`BUILD_TRIES` times."""
    from robosuite.utils.errors import RandomizationError

    from eval_runner.env import LiberoEnv

    saved = np.random.get_state()
    try:
        for attempt in range(BUILD_TRIES):
            np.random.seed(int(rng.integers(2**31)))
            try:
                return LiberoEnv(task, like.obs_spec, horizon=like.horizon, video=like.video)
            except RandomizationError:
                if attempt == BUILD_TRIES - 1:
                    raise
        raise AssertionError("unreachable")
    finally:
        np.random.set_state(saved)
