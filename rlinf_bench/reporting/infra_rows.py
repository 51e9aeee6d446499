"""Infrastructure checks: ProbeResults flattened to one row per measurement, each against its target."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from rlinf_bench.baselines import KNOWN_PROBES, infra_target
from rlinf_bench.contracts import InfraCheck, ProbeName, ProbeResult, Target
from rlinf_bench.reporting.probe_scope import DEMO_SIZE, undersized

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


def _no_target_why(reason: str) -> str:
    """``no target here: <the probe's why>`` (its own "measured, but no target is known here" said once)."""
    why = reason.removeprefix("measured, but no target is known here").lstrip("; ").removeprefix("measured, but ")
    if why.startswith("no target"):
        return why
    return f"no target here: {why}" if why else "no target here"


def infra_checks(probes: Sequence[ProbeResult]) -> list[InfraCheck]:
    """One row per measured value: the probe's own target metric carries the probe's verdict; other
    values are judged against the registry's target when there is one, else 'not_available'. A run too
    small for its target (:func:`~rlinf_bench.reporting.probe_scope.undersized`) judges nothing: its
    rows with a target are 'not_decided', saying so."""
    rows: list[InfraCheck] = []
    for p in probes:
        too_small = undersized(p)
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
        for i, (metric, m) in enumerate(p.values.items()):
            target = p.target if metric == own else _other_target(p, metric)
            if metric == own:
                verdict = p.verdict.value
                reason = p.reason
            elif target is not None:
                verdict = "pass" if _OPS[target.op](m.value, target.value) else "fail"
                reason = ""
            else:
                # A probe without any target says why on its headline (first) value: a CPU stand-in, an unknown
                # instance type; its other values just have none.
                why = _no_target_why(p.reason) if own is None and i == 0 else "no target for this metric"
                verdict, reason = "not_available", why
            if too_small and verdict in ("pass", "fail"):
                verdict, reason = "not_decided", too_small
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


def undecided(c: InfraCheck) -> bool:
    """A measured value with a target that it cannot answer: a run too small for it (``not_decided``), or
    figures the probe itself says are not the thing (a memory-backed "file system")."""
    return c.value is not None and (
        c.verdict == "not_decided" or (c.verdict == "not_available" and c.target is not None)
    )


def check_word(c: InfraCheck) -> str:
    """One check's verdict in words, the same in every renderer: pass, fail, ``demo size, not a verdict``
    (a run too small for its target), ``not decided`` (another reason), ``no target`` (measured, nothing to
    judge it by), ``not measured``."""
    if c.verdict in ("pass", "fail"):
        return c.verdict
    if undecided(c):
        return DEMO_SIZE if c.reason.startswith(DEMO_SIZE) else "not decided"
    return "no target" if c.value is not None else "not measured"
