"""The published robustness suites as this machine has them: per category, how many variants run here, and why
the others do not (for ``--list-tasks``, the run's result and the docs' table)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eval_runner.envs.published_assets import unavailable_variants
from rlinf_bench.published_suites import Category, categories_of, category_of, published_suite, published_suites

__all__ = ["CategoryRow", "availability_table", "published_listing", "unavailable_record", "unavailable_tasks"]


@dataclass(frozen=True)
class CategoryRow:
    """One category of a published benchmark: its variants, and those this machine cannot run, by reason."""

    category: Category
    variants: int
    unavailable: dict[str, int] = field(default_factory=dict)

    @property
    def available(self) -> int:
        return self.variants - sum(self.unavailable.values())


def unavailable_tasks(suite: str, task_ids: Sequence[int]) -> dict[int, str]:
    """Which of ``task_ids`` of ``suite`` this machine cannot run -> why and how to get them (none for a suite
    that is not a published robustness suite)."""
    if published_suite(suite) is None:
        return {}
    missing = unavailable_variants(suite)
    return {t: missing[t] for t in task_ids if t in missing}


def unavailable_record(suite: str, unavailable: dict[int, str]) -> dict[str, Any]:
    """What a run's result records of the variants it left out: how many, per category, and each reason's ids."""
    by_reason: dict[str, list[int]] = {}
    for task_id, why in sorted(unavailable.items()):
        by_reason.setdefault(why, []).append(task_id)
    return {
        "count": len(unavailable),
        "by_category": dict(Counter(str(category_of(suite, t)) for t in unavailable)),
        "reasons": [{"reason": why, "task_ids": ids} for why, ids in by_reason.items()],
    }


def availability_table(benchmark: str, suites: Sequence[str] | None = None) -> list[CategoryRow]:
    """Per category of ``benchmark`` (its paper's order), its variants over ``suites`` (default: all of the
    benchmark's) and, by reason, those this machine cannot run. Every variant counts in exactly one row."""
    names = suites if suites is not None else [s.name for s in published_suites(benchmark)]
    totals: Counter[str] = Counter()
    missing: dict[str, Counter[str]] = {}
    for suite in names:
        spec = published_suite(suite)
        if spec is None or spec.benchmark != benchmark:
            continue
        unavailable = unavailable_variants(suite)
        for task_id in range(_task_count(suite)):
            category = str(category_of(suite, task_id))
            totals[category] += 1
            if task_id in unavailable:
                missing.setdefault(category, Counter())[unavailable[task_id]] += 1
    return [CategoryRow(c, totals[c.key], dict(missing.get(c.key, {}))) for c in categories_of(benchmark)]


def _task_count(suite: str) -> int:
    from rlinf_bench.suites import get_suite

    return get_suite(suite).n_tasks


def published_listing(suite: str) -> list[str]:
    """``--list-tasks`` lines for a published suite: its categories, and the variants that cannot run here."""
    spec = published_suite(suite)
    if spec is None:
        return []
    lines = [f"{spec.description}; categories (variants, of which can run here):"]
    reasons: Counter[str] = Counter()
    for row in availability_table(spec.benchmark, [suite]):
        if row.variants:
            lines.append(f"  {row.category.key:<12} {row.category.label:<26} {row.variants:>5} {row.available:>5}")
            reasons.update(row.unavailable)
    for why, count in reasons.most_common():
        lines.append(f"  {count} cannot run here: {why}")
    return lines
