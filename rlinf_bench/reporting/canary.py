"""The simulator canary's verdict (probe ``sim_canary``) as the report and the summary message show it.

The report's "What changed besides the weights" always carries it when the request ran the probe: a
pass says the physics matched the shipped reference, a drift names the moved episodes and the versions
on each side. The summary message mentions it only when it failed (a pass is no news).
"""

from __future__ import annotations

from rlinf_bench.contracts.probes import ProbeName, ProbeResult, ProbeVerdict
from rlinf_bench.contracts.report import CheckpointReport

__all__ = ["canary_lines", "canary_message_lines", "canary_result", "is_canary_probe"]

MAX_MOVED_IN_MESSAGE = 3


def is_canary_probe(name: str) -> bool:
    """Whether ``name`` is the simulator canary (its rows are shown by this module, not as infra checks)."""
    return name == ProbeName.SIM_CANARY.value


def canary_result(report: CheckpointReport) -> ProbeResult | None:
    """The canary's ProbeResult of this report, if the request ran it."""
    return next((p for p in report.probes if is_canary_probe(p.probe)), None)


def _versions(versions: object) -> str:
    if not isinstance(versions, dict) or not versions:
        return "not recorded"
    return ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))


def canary_lines(report: CheckpointReport) -> list[str]:
    """The verdict, then (on drift) one line per moved episode and the versions of both sides; [] without it."""
    p = canary_result(report)
    if p is None:
        return []
    details = p.details
    if p.verdict == ProbeVerdict.PASS:
        summary = str(details.get("summary") or "every canary episode matches the reference")
        return [f"simulator canary: pass ({summary}; versions {_versions(details.get('versions_here'))})"]
    if p.verdict == ProbeVerdict.NOT_AVAILABLE:
        return [f"simulator canary: not available ({p.reason})"]
    moved = [str(m) for m in details.get("moved") or []]
    if not moved:  # the Job failed before it judged anything
        return [f"simulator canary: FAILED to run ({p.reason})"]
    lines = [f"simulator canary: DRIFT: {details.get('summary') or p.reason}"]
    lines += [f"  moved: {m}" for m in moved]
    lines.append(f"  versions here: {_versions(details.get('versions_here'))}")
    lines.append(f"  versions of the reference: {_versions(details.get('versions_reference'))}")
    return lines


def canary_message_lines(report: CheckpointReport) -> list[str]:
    """For the summary message: the canary only when it failed, its moved episodes shortened."""
    p = canary_result(report)
    if p is None or p.verdict != ProbeVerdict.FAIL:
        return []
    lines = canary_lines(report)
    moved = [line for line in lines if line.startswith("  moved: ")]
    if len(moved) > MAX_MOVED_IN_MESSAGE:
        keep = set(moved[:MAX_MOVED_IN_MESSAGE])
        lines = [line for line in lines if not line.startswith("  moved: ") or line in keep]
        lines.insert(1 + MAX_MOVED_IN_MESSAGE, f"  ... and {len(moved) - MAX_MOVED_IN_MESSAGE} more (see the report)")
    return lines
