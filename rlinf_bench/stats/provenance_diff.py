"""What changed besides the weights: the provenance of two checkpoints' runs, field by field.

The fields are the ones documented to move success rates: package versions (a transformers fork
replaced by dependency resolution, moojink/openvla-oft#135), the simulator and rendering backend, the
policy's decoding, chunk size and precision, the image and the GPU. A field one side does not record
(a package not installed, a GPU not described) is "unknown" and never counts as a difference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rlinf_bench.contracts import Provenance, ProvenanceChange, SuiteReport
from rlinf_bench.suites import simulator_packages

__all__ = ["DIFF_PACKAGES", "UNKNOWN", "changes_line", "environment_changes", "provenance_fields"]

UNKNOWN = "unknown"
DIFF_PACKAGES = ("torch", "transformers", "robosuite", "mujoco", "rlinf")
_POLICY_KEYS = {
    "precision": ("precision",),
    "chunk size": ("chunk_size", "num_action_chunks"),
    "temperature": ("temperature", "temperature_eval"),
}


def _find(tree: Any, keys: tuple[str, ...]) -> Any:
    """The first value under any of ``keys`` in nested dicts (served policies nest under ``server``)."""
    if isinstance(tree, dict):
        for key in keys:
            if tree.get(key) not in (None, ""):
                return tree[key]
        for value in tree.values():
            found = _find(value, keys)
            if found is not None:
                return found
    return None


def _gpu_type(gpus: list[str]) -> str | None:
    # "NVIDIA H200 (143771 MiB, driver 570.1)" -> "NVIDIA H200"; the count matters less than the model.
    names = sorted({g.split(" (")[0] for g in gpus})
    return ", ".join(names) or None


def _driver(gpus: list[str]) -> str | None:
    drivers = sorted({g.rsplit("driver ", 1)[1].rstrip(")") for g in gpus if "driver " in g})
    return ", ".join(drivers) or None


Getter = Callable[[Provenance], Any]


def _package(name: str) -> Getter:
    return lambda p: p.packages.get(name)


def _policy(keys: tuple[str, ...]) -> Getter:
    return lambda p: _find(p.extra.get("policy"), keys)


def _getters() -> list[tuple[str, str, Getter]]:
    out: list[tuple[str, str, Getter]] = [(f"package {pkg}", "packages", _package(pkg)) for pkg in DIFF_PACKAGES]
    out += [(f"package {pkg}", "simulator", _package(pkg)) for pkg in simulator_packages()]
    out.append(("rendering backend", "simulator", lambda p: p.rendering_backend or None))
    out += [(f"policy {label}", "policy", _policy(keys)) for label, keys in _POLICY_KEYS.items()]
    out.append(("image digest", "infrastructure", lambda p: p.image_digest))
    out.append(("gpu", "infrastructure", lambda p: _gpu_type(p.gpu)))
    out.append(("gpu driver", "infrastructure", lambda p: _driver(p.gpu)))
    return out


def provenance_fields(provenances: Iterable[Provenance | None]) -> dict[str, tuple[str, str]]:
    """field -> (category, value over the runs): one value, several joined with " | ", or "unknown"."""
    known = [p for p in provenances if p is not None]
    out: dict[str, tuple[str, str]] = {}
    for name, category, get in _getters():
        values = sorted({str(v) for p in known if (v := get(p)) is not None})
        out[name] = (category, " | ".join(values) if values else UNKNOWN)
    return out


def _decoding(suite: SuiteReport) -> str | None:
    return suite.protocol.decoding or None


def environment_changes(current: SuiteReport, reference: SuiteReport) -> list[ProvenanceChange]:
    """The fields whose known values differ between the two suites' completed runs."""
    now = provenance_fields(r.provenance for r in current.runs if r.status.value == "complete")
    before = provenance_fields(r.provenance for r in reference.runs if r.status.value == "complete")
    changes = [
        ProvenanceChange(field=name, category=category, before=before[name][1], now=value)
        for name, (category, value) in now.items()
        if UNKNOWN not in (value, before[name][1]) and value != before[name][1]
    ]
    dec_now, dec_before = _decoding(current), _decoding(reference)
    if dec_now and dec_before and dec_now != dec_before:
        changes.append(ProvenanceChange(field="policy decoding", category="policy", before=dec_before, now=dec_now))
    return changes


def changes_line(changes: list[ProvenanceChange]) -> str:
    """``torch 2.5.1 → 2.6.0; gpu NVIDIA A100 → NVIDIA H200`` (empty without changes)."""
    return "; ".join(f"{c.field.removeprefix('package ')} {c.before} → {c.now}" for c in changes)
