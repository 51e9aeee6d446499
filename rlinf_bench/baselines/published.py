"""Published success-rate baselines, loaded from the YAML files in ``rlinf_bench/data/baselines``.

The numbers live in data files rather than code so that each one sits next to the citation it came
from, and so that adding a baseline is a data change reviewed like any other.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_bench.errors import ConfigError, UnknownBaselineError
from rlinf_bench.protocols import BaselineProtocol
from rlinf_bench.registry import Registry

DATA_PACKAGE = "rlinf_bench.data.baselines"


class Baseline(BaseModel):
    """One published result: success rates (percent, as printed in the source) per suite or per task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registry name, e.g. libero/openvla-oft-rlinf")
    model: str = Field(description="Model as the source names it")
    benchmark: str
    level: Literal["suite", "task"] = Field(description="suite: keys are suite ids; task: keys are task names")
    unit: Literal["percent"] = "percent"
    values: dict[str, float] = Field(description="Success rate in percent per suite id (or per task name)")
    average: float | None = Field(default=None, description="The source's own average, verbatim")
    source: str = Field(min_length=1, description="Where the numbers come from")
    protocol: BaselineProtocol | None = Field(
        default=None, description="Episode settings and decoding the source measured under (LIBERO baselines)"
    )

    def rate(self, key: str) -> float | None:
        """The success rate for ``key`` as a fraction in [0, 1], or None when the source has none."""
        value = self.values.get(key)
        return None if value is None else value / 100.0


class PublishedBest(BaseModel):
    """A best published result, for context beside the baselines: never a verdict's reference, since the
    leaderboards it comes from pool protocols and some give an average only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    benchmark: str
    model: str
    metric: str = Field(description="What the number is, e.g. the average over four suites")
    values: dict[str, float] = Field(description="Success rate in percent per suite id, or 'average'")
    protocol: str = Field(
        min_length=1, description="The episode settings it was measured under, or that none is stated"
    )
    decoding: str = Field(min_length=1, description="Greedy or sampled (and how), or that none is stated")
    source: str = Field(min_length=1)
    date: str = Field(description="When the source was read or published (YYYY-MM-DD)")


class HardwareTable(BaseModel):
    """A qualitative comparison table from the brief, kept verbatim for reports."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    source: str = Field(min_length=1)
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


def _read_yaml(filename: str) -> Any:
    text = resources.files(DATA_PACKAGE).joinpath(filename).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _data_files() -> list[str]:
    return sorted(p.name for p in resources.files(DATA_PACKAGE).iterdir() if p.name.endswith(".yaml"))


@cache
def _load() -> tuple[Registry[Baseline], Registry[HardwareTable]]:
    """Parse every data file once; duplicate names are a packaging bug and fail loudly."""
    baselines: Registry[Baseline] = Registry("baseline", error=UnknownBaselineError, sort=True)
    tables: Registry[HardwareTable] = Registry("table", error=UnknownBaselineError, sort=True)
    for filename in _data_files():
        doc = _read_yaml(filename) or {}
        for raw in doc.get("baselines", []):
            entry = {
                "benchmark": doc.get("benchmark"),
                "level": doc.get("level"),
                "unit": doc.get("unit", "percent"),
                "source": doc.get("source"),
            }
            if doc.get("protocol") is not None:
                entry["protocol"] = doc["protocol"]
            entry.update(raw)
            try:
                baseline = Baseline.model_validate(entry)
            except ValidationError as exc:
                raise ConfigError(f"baselines file {filename}, entry {raw.get('name')!r}: {exc}") from exc
            if baseline.name in baselines or baseline.name in tables:
                raise ConfigError(f"baselines file {filename}: duplicate name {baseline.name!r}")
            baselines.register(baseline.name, value=baseline)
        for raw in doc.get("tables", []):
            table = HardwareTable.model_validate(raw)
            if table.name in baselines or table.name in tables:
                raise ConfigError(f"baselines file {filename}: duplicate name {table.name!r}")
            tables.register(table.name, value=table)
    return baselines, tables


@cache
def _best() -> tuple[list[PublishedBest], dict[str, list[str]]]:
    """The best published results and, per benchmark, the notes on what keeps numbers from being compared."""
    doc = _read_yaml("best_published.yaml") or {}
    try:
        best = [PublishedBest.model_validate(raw) for raw in doc.get("best_published", [])]
    except ValidationError as exc:
        raise ConfigError(f"baselines file best_published.yaml: {exc}") from exc
    notes = {str(k): [str(n) for n in v] for k, v in (doc.get("protocol_notes") or {}).items()}
    return best, notes


def best_published() -> list[PublishedBest]:
    """The best published results (context for the baselines, never a verdict's reference)."""
    return list(_best()[0])


def protocol_notes() -> dict[str, list[str]]:
    """Per benchmark, what keeps two published numbers from being compared (protocols, decodings)."""
    return dict(_best()[1])


def all_baselines() -> list[Baseline]:
    """Every success-rate baseline, sorted by name."""
    return _load()[0].values()


def baseline_names() -> list[str]:
    """Every success-rate baseline name, sorted."""
    return _load()[0].names()


def table_names() -> list[str]:
    """Every qualitative table name (e.g. hardware/eks-vs-paper), sorted."""
    return _load()[1].names()


def get_baseline(name: str) -> Baseline:
    """Look a baseline up by name; an unknown name raises with the closest names and the full list."""
    return _load()[0].get(name)


def get_baselines(names: list[str]) -> list[Baseline]:
    """Resolve several names at once (all are checked before any is used)."""
    return [get_baseline(n) for n in names]


def get_table(name: str) -> HardwareTable:
    """Look a qualitative table up by name (e.g. hardware/eks-vs-paper)."""
    return _load()[1].get(name)


def baselines_for_suite(suite: str) -> list[Baseline]:
    """Suite-level baselines that publish a number for ``suite`` (used to draw reference lines)."""
    return [b for b in _load()[0].values() if b.level == "suite" and suite in b.values]
