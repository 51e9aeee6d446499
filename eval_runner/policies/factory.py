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

#: The env kind a policy drives unless it says otherwise (its ``env_kind`` attribute): LIBERO, 7-d actions.
DEFAULT_ENV_KIND = "libero"
#: Per env kind (``eval_runner.envs.kinds``): turns what a scheme loader produced into a Policy of that kind,
#: or raises PolicyError saying what the kind accepts. RoboTwin registers one (14-d joint targets).
PolicyAdapter = Callable[[Any, PolicySpec], Policy]
ADAPTERS: Registry[PolicyAdapter] = Registry("policy adapter")

# Modules whose import registers schemes / builtin policies. Imported on first use of the registry.
_PLUGIN_MODULES = (
    "eval_runner.policies.builtin",
    "eval_runner.policies.remote",
    "eval_runner.policies.python_loader",
    "eval_runner.policies.rlinf_policy",
    "eval_runner.policies.openpi",
    "eval_runner.envs.robotwin_policies",  # builtin:hold and the RoboTwin adapter (numpy only, no runtime)
)
_plugins_loaded = False


#: Plugin modules this environment cannot import (a venv without their extra: the RoboTwin venv has no
#: msgpack for server:), with the missing module's name; a miss in SCHEMES names them.
_unavailable: dict[str, str] = {}


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    for name in _PLUGIN_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if not exc.name or exc.name.startswith("eval_runner"):
                raise
            _unavailable[name] = exc.name
    _plugins_loaded = True


def _scheme_loader(parsed: PolicySpec, spec: str) -> SchemeLoader:
    if parsed.scheme not in SCHEMES and _unavailable:
        missing = ", ".join(f"{module} (needs {dep})" for module, dep in sorted(_unavailable.items()))
        raise PolicyError(
            f"unknown policy scheme {parsed.scheme!r} in {spec!r}; valid here: {', '.join(SCHEMES.names())}. "
            f"Not importable in this environment: {missing}"
        )
    return SCHEMES.get(parsed.scheme, context=spec)


#: How each scheme's target is written, for the help and the docs (a scheme missing here shows SCHEME:TARGET).
SCHEME_TARGETS: dict[str, str] = {
    "server": "ws://HOST:PORT",
    "openpi": "ws://HOST:PORT",
    "python": "MODULE:FACTORY",
    "rlinf": "CONFIG",
}


def policy_kinds() -> list[str]:
    """Every kind of policy a spec can name, read from the registries: ``builtin:NAME`` for each builtin policy,
    then ``SCHEME:TARGET`` for each other scheme (e.g. ``server:ws://HOST:PORT``)."""
    _load_plugins()
    from eval_runner.policies.builtin import BUILTINS

    kinds = [f"builtin:{name}" for name in BUILTINS.names()]
    return kinds + [f"{s}:{SCHEME_TARGETS.get(s, 'TARGET')}" for s in SCHEMES.names() if s != "builtin"]


def resolve_scheme(spec: str) -> PolicySpec:
    """``spec`` parsed, once its scheme is known here (PolicyError listing the valid schemes otherwise)."""
    _load_plugins()
    parsed = parse_spec(spec)
    _scheme_loader(parsed, spec)
    return parsed


def valid_schemes() -> list[str]:
    """The scheme names ``load_policy`` accepts."""
    _load_plugins()
    return SCHEMES.names()


def load_policy(spec: str, checkpoint_dir: Path | None, *, env_kind: str = DEFAULT_ENV_KIND) -> Policy:
    """Build the policy a spec names, for a suite of ``env_kind`` (``libero`` or ``robotwin``).

    ``checkpoint_dir`` is a local checkpoint root (``…/global_step_<N>``) already materialized
    (see :func:`eval_runner.checkpoint_fetch.materialize_checkpoint`), or None for policies that
    read no checkpoint. Raises PolicyError (bad spec, unknown scheme/name, bad options, a policy of
    another env kind) or CheckpointError (the checkpoint cannot be read by this policy).
    """
    _load_plugins()
    parsed = parse_spec(spec)
    loader = _scheme_loader(parsed, spec)
    policy: Any = loader(parsed, checkpoint_dir)
    if env_kind in ADAPTERS:
        policy = ADAPTERS.get(env_kind)(policy, parsed)
    if not isinstance(policy, Policy):
        raise PolicyError(
            f"policy spec {spec!r} returned a {type(policy).__name__}; it must return an instance of "
            "eval_runner.policies.base.Policy (subclass it and implement act(obs) -> [B, 7])"
        )
    drives = getattr(policy, "env_kind", DEFAULT_ENV_KIND)
    if drives != env_kind:
        raise PolicyError(f"policy {spec!r} drives {drives} suites; it cannot drive a {env_kind} suite")
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


__all__ = [
    "ADAPTERS",
    "DEFAULT_ENV_KIND",
    "SCHEMES",
    "SCHEME_TARGETS",
    "PolicyAdapter",
    "Registry",
    "load_policy",
    "policy_kinds",
    "resolve_scheme",
    "take_options",
    "valid_schemes",
]
