"""Helpers every probe shares: running a probe into a ProbeResult, judging it, sizes, output.

A probe is a function that measures and returns ``values`` (plus details); everything else
(timing, environment, verdict, turning bad input into a result instead of a traceback) lives here
so that the five probes behave the same way.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlinf_bench.contracts import Measurement, ProbeEnvironment, ProbeResult, ProbeVerdict, Target
from rlinf_bench.errors import ConfigError, ProbeError, ProbeUnavailableError

log = logging.getLogger("infra_probes")

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str | int, *, name: str = "size") -> int:
    """Parse ``1G``, ``512M``, ``4KiB`` or a plain byte count into bytes (binary multiples, like nccl-tests and dd)."""
    if isinstance(text, int):
        return text
    match = _SIZE_RE.match(str(text))
    if not match:
        raise ConfigError(f"{name} {text!r} is not a size; write e.g. 1G, 512M, 64K or a byte count")
    number, unit, _ = match.groups()
    return int(float(number) * _SIZE_FACTORS[unit.lower()])


def format_size(nbytes: int) -> str:
    """Human size with binary units (1 GiB, 64 MiB), for tables and messages."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= factor and nbytes % factor == 0:
            return f"{nbytes // factor} {unit}"
    return f"{nbytes} B"


_TARGET_RE = re.compile(r"^\s*([\w./-]+)\s*(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*$")


def parse_target(text: str, *, unit: str = "", source: str = "command line") -> Target:
    """Parse ``--target 'busbw_gbps>=300'`` into a Target."""
    match = _TARGET_RE.match(text)
    if not match:
        raise ConfigError(f"--target {text!r} is not METRIC OP VALUE; write e.g. 'busbw_gbps>=300' or 'save_s<60'")
    metric, op, value = match.groups()
    return Target(metric=metric, op=op, value=float(value), unit=unit, source=source)


def meets(value: float, target: Target) -> bool:
    """Whether ``value`` satisfies ``target`` (op applied as ``value <op> target.value``)."""
    if target.op == ">":
        return value > target.value
    if target.op == ">=":
        return value >= target.value
    if target.op == "<":
        return value < target.value
    return value <= target.value


def extra_check(values: dict[str, Measurement], target: Target | None) -> list[dict[str, Any]]:
    """A secondary target (reported in ``details.checks``, not the verdict); empty when it cannot apply."""
    measured = values.get(target.metric) if target else None
    if target is None or measured is None:
        return []
    return [{"target": target.model_dump(), "value": measured.value, "passed": meets(measured.value, target)}]


def judge(values: dict[str, Measurement], target: Target | None) -> tuple[ProbeVerdict, str]:
    """Verdict of a measurement against its target; no target or no such value gives ``not_available``."""
    if target is None:
        return ProbeVerdict.NOT_AVAILABLE, "measured, but no target is known here; pass --target METRIC>=VALUE to judge"
    measured = values.get(target.metric)
    if measured is None:
        return (
            ProbeVerdict.NOT_AVAILABLE,
            f"target metric {target.metric!r} was not measured (measured: {', '.join(sorted(values)) or 'nothing'})",
        )
    text = f"{target.metric} = {measured.value:.4g} {measured.unit}, target {target.op} {target.value:g} {target.unit}"
    if target.source:
        text += f" ({target.source})"
    if meets(measured.value, target):
        return ProbeVerdict.PASS, text
    return ProbeVerdict.FAIL, text


@dataclass
class Outcome:
    """What a probe function returns: measurements, the target to judge them with, and extras."""

    values: dict[str, Measurement]
    target: Target | None
    details: dict[str, Any] = field(default_factory=dict)
    environment: ProbeEnvironment | None = None
    # A probe may already know the verdict is bad regardless of the target (wrong sums, Xid errors).
    forced_fail: str = ""
    # Set when the figures cannot answer the question (a memory-backed "file system"): not_available.
    unavailable: str = ""
    # Extra text appended to the verdict's reason (caveats).
    note: str = ""


def m(value: float, unit: str) -> Measurement:
    """Short constructor for a Measurement."""
    return Measurement(value=float(value), unit=unit)


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def run_probe(
    probe: str,
    settings: dict[str, Any],
    measure: Callable[[], Outcome],
    *,
    environment: Callable[[], ProbeEnvironment] | None = None,
    target_override: Target | None = None,
) -> ProbeResult:
    """Run ``measure`` and wrap what it returns, or why it could not run, into a ProbeResult.

    ProbeUnavailableError gives ``not_available``, any other RlinfBenchError ``fail``; both carry the
    error's message as the reason, so a Job's caller learns why without reading a traceback.
    """
    started_at = now_iso()
    t0 = time.perf_counter()
    env = _safe_environment(environment)
    try:
        outcome = measure()
    except ProbeUnavailableError as exc:
        log.warning("%s: not available: %s", probe, exc)
        return _result(probe, settings, env, started_at, t0, verdict=ProbeVerdict.NOT_AVAILABLE, reason=str(exc))
    except (ProbeError, ConfigError) as exc:
        log.error("%s: %s", probe, exc)
        return _result(probe, settings, env, started_at, t0, verdict=ProbeVerdict.FAIL, reason=str(exc))
    target = target_override or outcome.target
    if target_override is not None and not target_override.unit:
        target = target_override.model_copy(update={"unit": _unit_of(outcome.values, target_override.metric)})
    verdict, reason = judge(outcome.values, target)
    if outcome.unavailable:
        verdict, reason = ProbeVerdict.NOT_AVAILABLE, f"{outcome.unavailable}; measured {reason}"
    if outcome.forced_fail:
        verdict, reason = ProbeVerdict.FAIL, f"{outcome.forced_fail}; {reason}"
    if outcome.note:
        reason = f"{reason}. {outcome.note}"
    return _result(
        probe,
        settings,
        outcome.environment or env,
        started_at,
        t0,
        verdict=verdict,
        reason=reason,
        values=outcome.values,
        target=target,
        details=outcome.details,
    )


def _unit_of(values: dict[str, Measurement], metric: str) -> str:
    measured = values.get(metric)
    return measured.unit if measured else ""


def _safe_environment(environment: Callable[[], ProbeEnvironment] | None) -> ProbeEnvironment:
    # Environment detection is best effort: a probe must still report when, say, NVML is broken.
    if environment is None:
        return ProbeEnvironment()
    try:
        return environment()
    except Exception as exc:
        log.warning("environment detection failed: %s", exc)
        return ProbeEnvironment()


def _result(
    probe: str,
    settings: dict[str, Any],
    env: ProbeEnvironment,
    started_at: str,
    t0: float,
    **fields: Any,
) -> ProbeResult:
    return ProbeResult(
        probe=probe,
        settings=settings,
        environment=env,
        started_at=started_at,
        wall_s=round(time.perf_counter() - t0, 3),
        **fields,
    )


def summary_percentiles(samples: list[float]) -> dict[str, float]:
    """Mean, p50, p95, min, max of a sample (linear interpolation between order statistics)."""
    if not samples:
        return {}
    ordered = sorted(samples)

    def pct(q: float) -> float:
        pos = (len(ordered) - 1) * q
        lo = int(pos)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return {
        "mean": sum(ordered) / len(ordered),
        "p50": pct(0.5),
        "p95": pct(0.95),
        "min": ordered[0],
        "max": ordered[-1],
        "n": float(len(ordered)),
    }
