"""Reading an EvalRequest file and writing its Jobs as YAML (what ``render-jobs`` does)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from rlinf_bench.contracts import EvalRequest
from rlinf_bench.errors import ConfigError
from rlinf_k8s.jobs import JobBundle, jobs_for_request
from rlinf_k8s.pod_security import require_restricted

__all__ = ["bundle_yaml", "load_request", "write_manifests"]


def load_request(path: Path) -> EvalRequest:
    """An EvalRequest from a YAML or JSON file (JSON is YAML), with errors naming the file and field."""
    try:
        data: Any = yaml.safe_load(path.read_text())
    except FileNotFoundError as exc:
        raise ConfigError(f"request file {path} does not exist; see examples/eval-request.yaml") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"request file {path} is not valid YAML/JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"request file {path} must hold a mapping (an EvalRequest), not {type(data).__name__}")
    return EvalRequest.from_dict(data, source=str(path))


class _Dumper(yaml.SafeDumper):
    """Block-style YAML; long strings (the EvalRun JSON) stay on one line so they read as written."""


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def bundle_yaml(bundle: JobBundle) -> str:
    """The bundle's objects as one multi-document YAML text (Service first)."""
    docs = bundle.manifests()
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False, width=1 << 16, explicit_start=True)


def write_manifests(request: EvalRequest, out: Path, *, extra_env: Mapping[str, str] | None = None) -> list[Path]:
    """Write ``<out>/<job-name>.yaml`` for every Job of ``request``; returns the paths in submit order."""
    bundles = jobs_for_request(request, extra_env=extra_env)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for bundle in bundles:
        for manifest in bundle.manifests():
            if manifest["kind"] == "Job":
                require_restricted(manifest)
        path = out / f"{bundle.name}.yaml"
        path.write_text(bundle_yaml(bundle))
        paths.append(path)
    return paths
