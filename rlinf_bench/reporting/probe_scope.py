"""What a probe run measured (bytes, parameters, ranks, seconds) and whether it was big enough to judge.

A pass or a fail says nothing without its scale: a checkpoint "pass" from an 8 MB state dict does not
answer "does a 7B model save in under a minute?", and a storage "FAIL" from an 8 MiB write is open and
fsync latency, not the file system's throughput. Each probe's smallest meaningful run is in the
baselines registry (``infra.yaml`` ``verdict_sizes``); a smaller run keeps its figures and gets
"demo size, not a verdict" instead of pass or fail.
"""

from __future__ import annotations

from typing import Any

from rlinf_bench.baselines.probe_targets import VerdictSize, verdict_size
from rlinf_bench.contracts import ProbeName, ProbeResult
from rlinf_bench.reporting.format import human

__all__ = ["DEMO_SIZE", "count_text", "measured_scope", "size_text", "undersized"]

#: The words a probe run too small for its target gets in place of pass or fail.
DEMO_SIZE = "demo size, not a verdict"


def size_text(nbytes: float) -> str:
    """Bytes for people: ``8 MiB`` or ``1 GiB`` when exact (the probes' own sizes), else ``8.39 MB``."""
    n = int(nbytes)
    for unit, binary in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= binary and n == nbytes and n % binary == 0:
            return f"{n // binary} {unit}"
    for unit, decimal in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= decimal:
            return human(nbytes / decimal, unit)
    return f"{n} B"


def count_text(n: float) -> str:
    """A large count for people: ``4M``, ``7.5B`` (parameters), the digits below 10,000."""
    for suffix, factor in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= factor and n >= 1e4:
            return f"{n / factor:.3g}{suffix}"
    return human(n)


def _number(settings: dict[str, Any], key: str) -> float | None:
    value = settings.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _run_size(p: ProbeResult, size: VerdictSize) -> float | None:
    """The probe's own size setting; for nccl the size it was judged at (the sweep's nearest row)."""
    judged = p.details.get("verdict_bytes") if p.probe == ProbeName.NCCL else None
    if isinstance(judged, int | float):
        return float(judged)
    return _number(p.settings, size.setting)


def _amount(value: float, size: VerdictSize) -> str:
    return size_text(value) if size.unit == "bytes" else f"{count_text(value)} {size.unit}"


def undersized(p: ProbeResult) -> str | None:
    """Why ``p`` ran too small for a verdict (``demo size, not a verdict: ...``), or None when its size answers
    the target's question or is unknown (the result records no size setting)."""
    size = verdict_size(p.probe)
    if size is None or not p.values:
        return None
    ran = _run_size(p, size)
    if ran is None or ran >= size.at_least:
        return None
    return f"{DEMO_SIZE}: ran at {_amount(ran, size)}; a verdict needs ≥ {_amount(size.at_least, size)} ({size.flag}): {size.why}"


def measured_scope(p: ProbeResult) -> str:
    """What the run measured, for a checklist line: ``wrote then read 8 MiB``, ``a 4.0M-parameter bfloat16
    state dict (8 MB)``, ``all-reduce at 4 MiB over gloo, 2 ranks``; then how long the probe took."""
    s = p.settings
    parts: list[str] = []
    if p.probe == ProbeName.STORAGE and (n := _number(s, "size_bytes")) is not None:
        parts.append(f"wrote then read {size_text(n)}")
    elif p.probe == ProbeName.CHECKPOINT_IO and (n := _number(s, "params")) is not None:
        file = p.values.get("size_gb")
        on_disk = f" ({size_text(file.value * 1e9)})" if file is not None else ""
        parts.append(f"a {count_text(n)}-parameter {s.get('dtype', '')} state dict{on_disk}".replace("  ", " "))
    elif p.probe == ProbeName.NCCL and (n := _number(p.details, "verdict_bytes") or _number(s, "verdict_bytes")):
        ranks = p.values.get("ranks")
        who = f", {human(ranks.value)} ranks" if ranks is not None else ""
        parts.append(f"all-reduce at {size_text(n)} over {p.details.get('backend') or s.get('backend', '?')}{who}")
    elif p.probe == ProbeName.GPU and p.values:
        source = s.get("run_id") or s.get("experiment")
        window = _number(s, "window_s")
        parts.append(f"from training run {source}" if source else f"sampled over {human(window)} s" if window else "")
    if p.wall_s:
        parts.append(f"probe took {human(p.wall_s, 's')}")
    return ", ".join(x for x in parts if x)
