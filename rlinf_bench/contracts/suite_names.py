"""The suite ids the contracts know without the catalogue: the brief's default suites, the spellings of a suite
id that people write, and the one id each means.

The brief names LIBERO's suites "LIBERO-Spatial", "LIBERO-Long (libero_10)", "LIBERO-90" and RoboTwin's
horizon groups "Short" ... "Extra-Long"; papers and other harnesses write "libero_long" or "RoboTwin 2.0".
Every contract that carries a suite name reads it through :func:`canonical_suite_name`, and the suite
registry (:func:`rlinf_bench.suites.get_suite`) looks names up through it, so results, verdicts, baselines and
result folders all use the one id (``libero_10``) whichever spelling was given.
"""

from __future__ import annotations

__all__ = ["DEFAULT_SUITES", "SUITE_ALIASES", "canonical_suite_name", "suite_spelling"]

#: The suites of every eval matrix by default: the paper's "Reference Results" suites.
DEFAULT_SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10")

#: LIBERO-plus's and LIBERO-PRO's suites as people write them: "LIBERO-plus Spatial", "libero_pro_goal_lan".
_PUBLISHED_BASES = {"spatial": "spatial", "object": "object", "goal": "goal", "10": "10", "long": "10"}
_PRO_KINDS = {
    "object": "object",
    "position": "position",
    "swap": "position",
    "language": "language",
    "lan": "language",
    "semantic": "language",
    "task": "task",
    "environment": "environment",
    "env": "environment",
}
_PUBLISHED_ALIASES: dict[str, str] = {
    **{
        f"{prefix}_{base}": f"liberoplus_{short}"
        for prefix in ("libero_plus", "libero+", "liberoplus")
        for base, short in _PUBLISHED_BASES.items()
    },
    **{
        f"{prefix}_{base}_{kind}": f"liberopro_{short}_{canonical}"
        for prefix in ("libero_pro", "liberopro")
        for base, short in _PUBLISHED_BASES.items()
        for kind, canonical in _PRO_KINDS.items()
    },
}

#: Spellings (after :func:`suite_spelling`) that are not the id itself -> the id.
SUITE_ALIASES: dict[str, str] = {
    **{alias: suite for alias, suite in _PUBLISHED_ALIASES.items() if alias != suite},
    "libero_long": "libero_10",
    "robotwin_long+xl": "robotwin_long_xl",
    "robotwin_long_+_xl": "robotwin_long_xl",
    "robotwin_xl": "robotwin_extra_long",
    # "RoboTwin 2.0", "robotwin2", with or without a horizon group after it.
    **{
        f"{prefix}{group}": f"robotwin{group}"
        for prefix in ("robotwin_2.0", "robotwin2.0", "robotwin2", "robotwin_2")
        for group in ("", "_short", "_medium", "_long", "_extra_long", "_long_xl")
    },
}


def suite_spelling(name: str) -> str:
    """``name`` as suite ids are written: lower case, ``_`` for dashes and spaces ("LIBERO-Spatial" ->
    "libero_spatial"). Every suite id is already in this form; ``robotwin/<task>`` keeps its slash."""
    return "_".join(name.strip().lower().replace("-", " ").split())


def canonical_suite_name(name: str) -> str:
    """The suite id ``name`` means: "LIBERO-Long" and "libero_long" -> "libero_10", "LIBERO-Spatial" ->
    "libero_spatial"; an id comes back unchanged, and an unknown name in id form (the registry refuses it)."""
    key = suite_spelling(name)
    return SUITE_ALIASES.get(key, key)
