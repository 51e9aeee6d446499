"""What a Job's container would execute, computed the way the kubelet does, for running it locally.

Kubernetes expands ``$(VAR)`` in ``command``/``args`` using the container's env (``$$`` is a literal
``$``; an unknown ``$(VAR)`` stays as written) and fills ``valueFrom.fieldRef`` env vars from the pod.
Reproducing that exactly means a command that works under the local executor works in a pod.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kubernetes import client as k8s

from rlinf_bench.errors import JobSpecError

__all__ = ["LocalCommand", "expand_var_refs", "local_command"]

# The images' interpreter is `python` on PATH; locally the Job must use *this* environment's
# interpreter (the venv with rlinf-bench installed), whatever `python` on PATH is.
PYTHON_NAMES = frozenset({"python", "python3"})


def expand_var_refs(text: str, lookup: Callable[[str], str | None]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: ``$$`` -> ``$``; unknown or unterminated references stay literal."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "$" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            end = text.find(")", i + 2)
            if end < 0:
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : end]
            value = lookup(name)
            out.append(value if value is not None else f"$({name})")
            i = end + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


@dataclass(frozen=True)
class LocalCommand:
    """An argv and the environment variables the container defines (to lay over the local env)."""

    argv: list[str]
    env: dict[str, str]


def _field_value(path: str, pod_name: str, namespace: str) -> str:
    values = {
        "metadata.name": pod_name,
        "metadata.namespace": namespace,
        "spec.nodeName": socket.gethostname(),
        "spec.serviceAccountName": "",
        "status.hostIP": "127.0.0.1",
        "status.podIP": "127.0.0.1",
    }
    if path not in values:
        raise JobSpecError(f"env fieldRef {path!r} cannot be resolved by the local executor")
    return values[path]


def local_command(
    job: k8s.V1Job, *, pod_name: str, extra_env: Mapping[str, str] | None = None, python: str = sys.executable
) -> LocalCommand:
    """The argv and env that the (single) container of ``job`` runs, resolved for this machine."""
    spec = job.spec.template.spec if job.spec and job.spec.template else None
    if spec is None or not spec.containers or len(spec.containers) != 1:
        raise JobSpecError("the local executor runs Jobs with exactly one container")
    c = spec.containers[0]
    namespace = (job.metadata.namespace if job.metadata else None) or "default"
    env: dict[str, str] = dict(extra_env or {})
    for var in c.env or []:
        if var.value_from is not None:
            if var.value_from.field_ref is None:
                raise JobSpecError(f"env {var.name}: only literal values and fieldRef are supported locally")
            env[var.name] = _field_value(var.value_from.field_ref.field_path, pod_name, namespace)
        else:
            # An env value may refer to variables defined before it, as in the kubelet.
            env[var.name] = expand_var_refs(var.value or "", env.get)
    argv = [expand_var_refs(a, env.get) for a in [*(c.command or []), *(c.args or [])]]
    if not argv:
        raise JobSpecError("the container has no command: the local executor cannot use the image's entrypoint")
    if argv[0] in PYTHON_NAMES:
        argv[0] = python
    elif argv[0] == "torchrun":
        # torchrun is a console script of the same torch install: run it through this interpreter.
        argv[:1] = [python, "-m", "torch.distributed.run"]
    return LocalCommand(argv=argv, env=env)
