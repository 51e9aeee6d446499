"""The asset boundary: find the RoboTwin assets, or stop with a message that says how to get them.

The runtime ships code and configs only; its scenes load the aloha-agilex embodiment, object meshes
and textures from an asset snapshot downloaded separately (a Hugging Face dataset). Without it, the
first scene build fails somewhere inside SAPIEN. Every RoboTwin evaluation therefore checks the
snapshot first, with the runtime's own validator, and turns a miss into :class:`AssetsMissingError`
(exit status 2) naming where it looked and the runtime's download command.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from rlinf_bench.errors import ConfigError, SimulatorError

__all__ = ["ASSETS_ENV", "RUNTIME_DIST", "AssetsMissingError", "AssetsRoot", "download_command", "resolve_assets"]

#: The runtime's own variable for the asset root (its VectorEnv and clutter loader read it).
ASSETS_ENV = "ROBOTWIN_ASSETS_ROOT"
#: The distribution that carries the runtime (and its download command).
RUNTIME_DIST = "rlinf-robotwin-runtime"


class AssetsMissingError(ConfigError):
    """The RoboTwin asset snapshot is absent or incomplete (exit status 2, never a SAPIEN traceback)."""


@dataclass(frozen=True)
class AssetsRoot:
    """A validated asset snapshot: where it is and what the runtime's validator says about it."""

    root: Path
    source: str
    identity: dict[str, Any]


def download_command() -> str:
    """The runtime's console script that downloads the pinned snapshot, read from its entry points."""
    try:
        scripts = [ep.name for ep in metadata.distribution(RUNTIME_DIST).entry_points if ep.group == "console_scripts"]
    except metadata.PackageNotFoundError as exc:
        raise SimulatorError(
            f"{RUNTIME_DIST} is not installed in this environment; RoboTwin runs in its own venv: "
            "`make setup-robotwin`, then use .venv-robotwin/bin/python (or the RoboTwin eval image)"
        ) from exc
    downloaders = [s for s in scripts if "download" in s]
    if not downloaders:
        raise SimulatorError(f"{RUNTIME_DIST} declares no download command (console scripts: {scripts})")
    return downloaders[0]


def _candidate(explicit: str | Path | None, environ: dict[str, str]) -> tuple[Path, str]:
    if explicit:
        return Path(explicit).expanduser(), "--assets"
    if environ.get(ASSETS_ENV):
        return Path(environ[ASSETS_ENV]).expanduser(), f"${ASSETS_ENV}"
    # The runtime's task code falls back to ./assets/... relative to the working directory.
    return Path.cwd(), f"the runtime's default (the current directory; ${ASSETS_ENV} is not set)"


def resolve_assets(explicit: str | Path | None = None, *, environ: dict[str, str] | None = None) -> AssetsRoot:
    """The asset root to use: ``explicit`` (``--assets``), else ``$ROBOTWIN_ASSETS_ROOT``, else the cwd.

    Validated with the runtime's ``robotwin.assets.validate_root`` (required folders and, for a managed
    snapshot, the pinned revision). Raises :class:`AssetsMissingError` with the fix when it fails.
    """
    env = dict(os.environ) if environ is None else environ
    root, source = _candidate(explicit, env)
    command = download_command()
    from robotwin.assets import ASSET_REPOSITORY, ASSET_REVISION, validate_root

    try:
        identity: dict[str, Any] = validate_root(root)
    except ValueError as exc:
        raise AssetsMissingError(
            f"RoboTwin assets are missing: looked in {root.resolve()} (from {source}): {exc}. "
            f"Download the pinned snapshot ({ASSET_REPOSITORY}@{ASSET_REVISION[:12]}, a Hugging Face dataset) "
            f"with `{command} --output DIR`, then `export {ASSETS_ENV}=DIR` or pass --assets DIR. "
            "Machines without access to the Hugging Face hub cannot run RoboTwin rollouts"
        ) from None
    return AssetsRoot(root=Path(identity["root"]), source=source, identity=identity)
