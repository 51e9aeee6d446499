"""Infrastructure checks: ProbeResults flattened to one row per measurement, each against its target."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from rlinf_bench.baselines import KNOWN_PROBES, infra_target
from rlinf_bench.contracts import InfraCheck, ProbeName, ProbeResult, Target

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}
# Storage targets depend on the file system's capacity and tier, which only the probe knows.
_OWN_TARGET_ONLY = {ProbeName.STORAGE, ProbeName.NCCL}


def _other_target(probe: ProbeResult, metric: str) -> Target | None:
    """Registry target for a value that is not the probe's own target metric (e.g. load_s next to save_s)."""
    if probe.probe not in KNOWN_PROBES or probe.probe in _OWN_TARGET_ONLY:
        return None
    return infra_target(probe.probe, metric)


def infra_checks(probes: Sequence[ProbeResult]) -> list[InfraCheck]:
    """One row per measured value: the probe's own target metric carries the probe's verdict; other
    values are judged against the registry's target when there is one, else 'not_available'."""
    rows: list[InfraCheck] = []
    for p in probes:
        if not p.values:
            rows.append(InfraCheck(probe=p.probe, metric="—", value=None, verdict=p.verdict.value, reason=p.reason))
            continue
        own = p.target.metric if p.target is not None else None
        if own is not None and own not in p.values:
            rows.append(
                InfraCheck(
                    probe=p.probe, metric=own, value=None, verdict=p.verdict.value, reason=p.reason or "not measured"
                )
            )
        for metric, m in p.values.items():
            target = p.target if metric == own else _other_target(p, metric)
            if metric == own:
                verdict = p.verdict.value
                reason = p.reason
            elif target is not None:
                verdict = "pass" if _OPS[target.op](m.value, target.value) else "fail"
                reason = ""
            else:
                verdict, reason = "not_available", "no target for this metric"
            rows.append(
                InfraCheck(
                    probe=p.probe,
                    metric=metric,
                    value=m.value,
                    unit=m.unit,
                    op=target.op if target else "",
                    target=target.value if target else None,
                    verdict=verdict,
                    source=target.source if target else "",
                    reason=reason,
                )
            )
    return rows
