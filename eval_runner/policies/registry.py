"""Turn a policy spec string into a :class:`Policy`.

Two registries with decorator registration: *schemes* (``builtin``, ``server``, ``python``, ``rlinf``) and,
inside ``builtin``, the builtin policy names. A miss lists the valid names and suggests the closest
one. Scheme loaders import their heavy dependencies (torch, websockets) only when used, so listing
specs or parsing a request stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from eval_runner.policies.base import Policy
from eval_runner.policies.spec import OptionValue, PolicySpec, parse_spec
from rlinf_bench.errors import PolicyError, UnknownPolicyError
from rlinf_bench.registry import Registry as CoreRegistry

T = TypeVar("T")

SchemeLoader = Callable[[PolicySpec, Path | None], Policy]


class Registry(CoreRegistry[T]):
    """The core's Registry, listing names sorted; a miss raises UnknownPolicyError (a PolicyError)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind, error=UnknownPolicyError, sort=True)


SCHEMES: Registry[SchemeLoader] = Registry("policy scheme")

# Modules whose import registers schemes / builtin policies. Imported on first use of the registry.
_PLUGIN_MODULES = (
    "eval_runner.policies.builtin",
    "eval_runner.policies.remote",
    "eval_runner.policies.python_loader",
    "eval_runner.policies.rlinf_policy",
    "eval_runner.policies.openpi",
)
_plugins_loaded = False


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    for name in _PLUGIN_MODULES:
        importlib.import_module(name)
    _plugins_loaded = True


def valid_schemes() -> list[str]:
    """The scheme names ``load_policy`` accepts."""
    _load_plugins()
    return SCHEMES.names()


def load_policy(spec: str, checkpoint_dir: Path | None) -> Policy:
    """Build the policy a spec names.

    ``checkpoint_dir`` is a local checkpoint root (``…/global_step_<N>``) already materialized
    (see :func:`eval_runner.checkpoint_fetch.materialize_checkpoint`), or None for policies that
    read no checkpoint. Raises PolicyError (bad spec, unknown scheme/name, bad options) or
    CheckpointError (the checkpoint cannot be read by this policy).
    """
    _load_plugins()
    parsed = parse_spec(spec)
    loader = SCHEMES.get(parsed.scheme, context=spec)
    policy = loader(parsed, checkpoint_dir)
    if not isinstance(policy, Policy):
        raise PolicyError(f"policy spec {spec!r} produced a {type(policy).__name__}, not an eval_runner Policy")
    return policy


def take_options(spec: PolicySpec, allowed: dict[str, type]) -> dict[str, Any]:
    """Check a spec's options against ``{name: type}``; unknown names or wrong types raise PolicyError.

    ``float`` accepts ints; ``str`` accepts anything (it is re-stringified) so ``cameras=1`` is not
    silently turned into a number.
    """
    out: dict[str, Any] = {}
    for key, value in spec.options.items():
        if key not in allowed:
            valid = ", ".join(sorted(allowed)) or "(none)"
            raise PolicyError(f"policy spec {spec.raw!r}: unknown option {key!r}; valid options: {valid}")
        out[key] = _coerce(spec, key, value, allowed[key])
    return out


def _coerce(spec: PolicySpec, key: str, value: OptionValue, kind: type) -> Any:
    if kind is str:
        return str(value).lower() if isinstance(value, bool) else str(value)
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is bool and isinstance(value, bool):
        return value
    raise PolicyError(f"policy spec {spec.raw!r}: option {key}={value!r} must be of type {kind.__name__}")


__all__ = ["SCHEMES", "Registry", "load_policy", "take_options", "valid_schemes"]
