"""``python:module:factory`` — any in-process policy.

``factory(checkpoint_dir=..., **options)`` must return a :class:`Policy` (for a RoboTwin suite: see
:mod:`eval_runner.envs.robotwin_policies`); :func:`~eval_runner.policies.factory.load_policy` checks
what it returned against the suite's env kind. Options from the spec's query string are passed as keyword arguments, typed (int, float, bool, else str), e.g.
``python:my_pkg.policies:make_policy?temperature=0&device=cuda:0``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from eval_runner.policies.base import Policy
from eval_runner.policies.factory import SCHEMES
from eval_runner.policies.spec import PolicySpec
from rlinf_bench.errors import PolicyError, RlinfBenchError


@SCHEMES.register("python")
def _load_python(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    module_name, sep, attr = spec.target.rpartition(":")
    if not sep or not module_name or not attr:
        raise PolicyError(
            f"policy spec {spec.raw!r}: expected python:MODULE:FACTORY (e.g. python:my_pkg.policies:make_policy)"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise PolicyError(
                f"policy spec {spec.raw!r}: module {module_name!r} not found; install its package or add its "
                "directory to PYTHONPATH"
            ) from exc
        raise PolicyError(
            f"policy spec {spec.raw!r}: importing {module_name!r} failed because it needs {exc.name!r}; "
            "install that dependency in this environment"
        ) from exc
    except Exception as exc:
        raise PolicyError(
            f"policy spec {spec.raw!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    factory = getattr(module, attr, None)
    if factory is None:
        public = sorted(name for name in vars(module) if not name.startswith("_"))
        raise PolicyError(
            f"policy spec {spec.raw!r}: module {module_name!r} has no attribute {attr!r} "
            f"(it defines: {', '.join(public[:20]) or 'nothing public'})"
        )
    if not callable(factory):
        raise PolicyError(f"policy spec {spec.raw!r}: {module_name}.{attr} is a {type(factory).__name__}, not callable")
    try:
        policy = factory(checkpoint_dir=checkpoint_dir, **spec.options)
    except RlinfBenchError:
        raise  # already names the input and the fix (e.g. CheckpointError)
    except Exception as exc:
        raise PolicyError(
            f"policy spec {spec.raw!r}: {module_name}.{attr}(checkpoint_dir={checkpoint_dir}, "
            f"{', '.join(f'{k}={v!r}' for k, v in spec.options.items())}) raised {type(exc).__name__}: {exc}"
        ) from exc
    # load_policy checks what came back against the suite's env kind (a RoboTwin suite adapts its own objects)
    return policy
