"""Which env kind a suite needs, and what every kind provides to the one CLI.

The kind is the suite's ``simulator`` (:func:`rlinf_bench.suites.get_suite`): ``libero`` for the LIBERO
suites, ``robotwin`` for ``robotwin``, ``robotwin_<group>`` and ``robotwin/<task>``. A kind's module is
imported only when asked for, and imports no simulator itself, so the CLI can list every kind's options
in either venv.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rlinf_bench.contracts import EvalRun, RunResult
from rlinf_bench.errors import ConfigError, UnknownSuiteError
from rlinf_bench.robotwin import is_robotwin_suite
from rlinf_bench.suites import get_suite

__all__ = ["KIND_MODULES", "EnvKind", "all_kinds", "check_options", "env_kind", "kind_for_suite"]

#: Env kind -> the module that defines it (its ``KIND``).
KIND_MODULES = {
    "libero": "eval_runner.envs.libero_kind",
    "robotwin": "eval_runner.envs.robotwin_kind",
}


@dataclass(frozen=True)
class EnvKind:
    """One env kind: its command-line options, its task listing and its run."""

    name: str
    #: title of its option group in ``--help``
    title: str
    #: adds the kind's own options (each defaulting to None) to a parser or argument group
    add_arguments: Callable[[argparse._ArgumentGroup], None]
    #: the ``dest`` of each of those options (another kind's suite refuses them when given)
    options: tuple[str, ...]
    #: the ``--list-tasks`` text of a suite of this kind
    list_tasks: Callable[[str], str]
    #: runs an EvalRun of this kind, writing its RunResult to ``out`` as it grows: (run, out, args, command)
    evaluate: Callable[[EvalRun, str, argparse.Namespace, Sequence[str]], RunResult]


def env_kind(name: str) -> EnvKind:
    """The kind called ``name`` (a suite's ``simulator``)."""
    if name not in KIND_MODULES:
        raise ConfigError(f"no env kind {name!r} in eval_runner (known: {', '.join(KIND_MODULES)})")
    kind: EnvKind = importlib.import_module(KIND_MODULES[name]).KIND
    return kind


def all_kinds() -> list[EnvKind]:
    """Every kind, in a fixed order (LIBERO first)."""
    return [env_kind(name) for name in KIND_MODULES]


def kind_for_suite(suite: str) -> EnvKind:
    """The kind that runs ``suite``.

    A misspelt suite goes to the kind its name belongs to (``robotwin…`` or LIBERO), whose run writes the
    failed result with the closest valid name, as every run writes its result file.
    """
    try:
        return env_kind(get_suite(suite).simulator)
    except UnknownSuiteError:
        return env_kind("robotwin" if is_robotwin_suite(suite) else "libero")


def check_options(kind: EnvKind, suite: str, args: argparse.Namespace) -> None:
    """Refuse options of another kind (e.g. ``--assets`` on a LIBERO suite) instead of ignoring them."""
    for other in all_kinds():
        if other.name == kind.name:
            continue
        given = [f"--{dest.replace('_', '-')}" for dest in other.options if getattr(args, dest, None) is not None]
        if given:
            raise ConfigError(f"{', '.join(given)} only apply to {other.name} suites; {suite} is a {kind.name} suite")
