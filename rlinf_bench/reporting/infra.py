"""Infrastructure checks: ProbeResults flattened to one row per measurement with a target."""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_bench.contracts import InfraCheck, ProbeResult


def infra_checks(probes: Sequence[ProbeResult]) -> list[InfraCheck]:
    """One row per probe: its target metric (or every value when it has no target), with its verdict."""
    rows: list[InfraCheck] = []
    for p in probes:
        if p.target is not None:
            m = p.values.get(p.target.metric)
            rows.append(
                InfraCheck(
                    probe=p.probe,
                    metric=p.target.metric,
                    value=m.value if m else None,
                    unit=p.target.unit,
                    op=p.target.op,
                    target=p.target.value,
                    verdict=p.verdict.value,
                    source=p.target.source,
                    reason=p.reason,
                )
            )
            continue
        if not p.values:
            rows.append(InfraCheck(probe=p.probe, metric="—", value=None, verdict=p.verdict.value, reason=p.reason))
        for metric, m in p.values.items():
            rows.append(
                InfraCheck(
                    probe=p.probe, metric=metric, value=m.value, unit=m.unit, verdict=p.verdict.value, reason=p.reason
                )
            )
    return rows
