"""Python, the installed extras, and drift of the packages a result depends on."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import platform
import re
import sys
from importlib import resources
from typing import Any

import yaml

from rlinf_bench.doctor.context import REQUIRED_EXTRAS, DoctorContext
from rlinf_bench.doctor.model import CheckResult

DIST = "rlinf-bench"
MIN_PYTHON = (3, 11)
_EXTRA_RE = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extras_requirements() -> dict[str, list[str]]:
    """Requirement strings of every extra of the installed rlinf-bench distribution."""
    out: dict[str, list[str]] = {}
    for req in importlib.metadata.requires(DIST) or []:
        spec, _, marker = req.partition(";")
        m = _EXTRA_RE.search(marker)
        if m:
            out.setdefault(m.group(1), []).append(spec.strip())
    return out


def unmet(requirement: str) -> str | None:
    """Why ``requirement`` is not satisfied here (None when it is)."""
    try:
        from packaging.requirements import Requirement

        req = Requirement(requirement)
        name, spec = req.name, req.specifier
    except ImportError:  # packaging is nearly always there; without it, presence is all we check
        m = _NAME_RE.match(requirement)
        name, spec = (m.group(1) if m else requirement), None
    if "[" in name or _normalize(name) == DIST:
        return None  # the "all" extra names other extras
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return f"{name} missing"
    if spec is not None and not spec.contains(version.split("+")[0], prereleases=True):
        return f"{name} {version} (need {spec})"
    return None


def check_python(ctx: DoctorContext) -> list[CheckResult]:
    """Interpreter version and which extras are installed (the target's own must be complete)."""
    results: list[CheckResult] = []
    version = platform.python_version()
    if sys.version_info[:2] < MIN_PYTHON:
        results.append(
            ctx.problem(
                "python.version",
                f"Python {version} at {sys.executable}",
                f"use Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer (`make setup` creates .venv with python3.11)",
            )
        )
    else:
        results.append(ctx.ok("python.version", f"Python {version} at {sys.executable}"))
    try:
        extras = extras_requirements()
    except importlib.metadata.PackageNotFoundError:
        return [
            *results,
            ctx.problem("python.extras", f"{DIST} is not installed in this interpreter", "run `make setup`"),
        ]
    gaps = {name: [g for g in (unmet(r) for r in reqs) if g] for name, reqs in sorted(extras.items()) if name != "all"}
    installed = [name for name, g in gaps.items() if not g]
    partial = {name: g for name, g in gaps.items() if g}
    measured = f"extras complete: {', '.join(installed) or 'none'}"
    if partial:
        measured += "; incomplete: " + "; ".join(f"{n} ({', '.join(g[:3])})" for n, g in partial.items())
    needed = REQUIRED_EXTRAS[ctx.target]
    unknown = [n for n in needed if n not in gaps]
    absent = {n: [g for g in gaps.get(n, []) if g.endswith(" missing")] for n in needed}
    absent = {n: g for n, g in absent.items() if g}
    names = ",".join(needed)
    fix = f"pip install -e '.[{names}]' (or `make setup`)"
    if unknown or absent:
        results.append(
            ctx.problem(
                "python.extras", measured, f"--for {ctx.target.value} needs the extras {names}: {fix}", gaps=partial
            )
        )
    elif any(gaps.get(n) for n in needed):
        # Installed but at other versions: the run can go on; packages.drift says what that may change.
        results.append(ctx.warn("python.extras", measured, f"versions differ from the pins: {fix}", gaps=partial))
    else:
        results.append(ctx.ok("python.extras", measured, gaps=partial))
    return results


def reference_versions() -> dict[str, Any]:
    """The versions the project's own results were made with (rlinf_bench/data/doctor)."""
    text = resources.files("rlinf_bench.data").joinpath("doctor/reference_versions.yaml").read_text()
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def _origin(name: str) -> str:
    """Where a distribution came from: a VCS URL, a local path, or the index (PEP 610 direct_url.json)."""
    try:
        raw = importlib.metadata.distribution(name).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return ""
    if not raw:
        return "index"
    info = json.loads(raw)
    if "vcs_info" in info:
        return (
            f"{info['vcs_info'].get('vcs', 'vcs')}+{info.get('url', '')}@{info['vcs_info'].get('commit_id', '')[:12]}"
        )
    return str(info.get("url", "local"))


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_packages(ctx: DoctorContext) -> list[CheckResult]:
    """Installed versions against the reference ones; any drift is a warning naming the package."""
    ref = reference_versions()
    drift: list[str] = []
    same: list[str] = []
    absent: list[str] = []
    for name, entry in ref.get("packages", {}).items():
        found = _version(name)
        if found is None:
            absent.append(name)
        elif found.split("+")[0] != entry["version"]:
            drift.append(f"{name} {found} (results made with {entry['version']}: {entry['why']})")
        else:
            same.append(f"{name} {found}")
    results: list[CheckResult] = []
    detail = {"same": same, "drift": drift, "absent": absent}
    if drift:
        results.append(
            ctx.warn(
                "packages.drift",
                f"{len(drift)} package(s) differ from the versions the project's results were made with: "
                + "; ".join(drift),
                "install the pinned versions (pip install -e '.[all]') or record the difference next to the results",
                **detail,
            )
        )
    else:
        text = f"{len(same)} packages at the reference versions"
        results.append(
            ctx.ok("packages.drift", text + (f"; not installed: {', '.join(absent)}" if absent else ""), **detail)
        )
    return results + [_watched(ctx, name, entry) for name, entry in ref.get("watch", {}).items()]


def _watched(ctx: DoctorContext, name: str, entry: dict[str, Any]) -> CheckResult:
    """A watched package above its limit warns, unless it is the version our lock installs, from the index,
    with no package that needs the limit importable beside it (then the limit does not bind here)."""
    found = _version(name)
    if found is None:
        return ctx.ok(f"packages.{name}", f"{name} not installed")
    origin = _origin(name)
    measured = f"{name} {found} from {origin}"
    if not _newer(found, str(entry.get("max", ""))):
        return ctx.ok(f"packages.{name}", measured)
    binding = [m for m in entry.get("limit_for", []) if importlib.util.find_spec(m) is not None]
    if found == entry.get("locked") and origin == "index" and not binding:
        return ctx.ok(
            f"packages.{name}",
            f"{measured}: the version rlinf-bench's lock installs; policies that need {name}<={entry['max']} "
            f"({', '.join(entry.get('limit_for', [])) or 'none'}) are not installed here",
        )
    beside = f" beside {', '.join(binding)}, which needs <={entry['max']}" if binding else ""
    return ctx.warn(
        f"packages.{name}",
        f"{measured}, newer than {entry['max']}{beside}",
        f"{' '.join(str(entry['why']).split())} Reinstall the version your policy was trained with.",
    )


def _newer(found: str, limit: str) -> bool:
    if not limit:
        return False
    try:
        from packaging.version import Version

        return Version(found) > Version(limit)
    except Exception:  # an unparseable version is reported as found, not judged
        return False
