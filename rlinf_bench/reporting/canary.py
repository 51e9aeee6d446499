"""The simulator canary's verdict (probe ``sim_canary``) as the report and the summary message show it.

The report's "What changed besides the weights" always carries it when the request ran the probe: a
pass says the physics matched the shipped reference, a drift names the moved episodes and the versions
on each side. The summary message mentions it only when it failed (a pass is no news), or when its result
cannot be read: details of another shape than :class:`~rlinf_bench.contracts.probes.SimCanaryDetails` give
one line, "simulator canary result unreadable: <why>", and the rest of the report is written as ever.
"""

from __future__ import annotations

from pydantic import ValidationError

from rlinf_bench.contracts.probes import ProbeName, ProbeResult, ProbeVerdict, SimCanaryDetails
from rlinf_bench.contracts.report import CheckpointReport

__all__ = ["canary_details", "canary_lines", "canary_message_lines", "canary_result", "is_canary_probe"]

MAX_MOVED_IN_MESSAGE = 3


def is_canary_probe(name: str) -> bool:
    """Whether ``name`` is the simulator canary (its rows are shown by this module, not as infra checks)."""
    return name == ProbeName.SIM_CANARY.value


def canary_result(report: CheckpointReport) -> ProbeResult | None:
    """The canary's ProbeResult of this report, if the request ran it."""
    return next((p for p in report.probes if is_canary_probe(p.probe)), None)


#: At most this many validation problems are named in the "unreadable" line.
_PROBLEMS_SHOWN = 3
_UNREADABLE = "simulator canary result unreadable: "


def _versions(versions: dict[str, str]) -> str:
    if not versions:
        return "not recorded"
    return ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))


def canary_details(p: ProbeResult) -> SimCanaryDetails | str:
    """The canary's details, or why they cannot be read (each problem with its field, at most a few)."""
    try:
        return SimCanaryDetails.model_validate(p.details)
    except ValidationError as exc:
        problems = [
            f"details.{'.'.join(str(x) for x in e['loc']) or '(root)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        ]
        more = len(problems) - _PROBLEMS_SHOWN
        return "; ".join(problems[:_PROBLEMS_SHOWN]) + (f"; and {more} more" if more > 0 else "")


def canary_lines(report: CheckpointReport) -> list[str]:
    """The verdict, then (on drift) one line per moved episode and the versions of both sides; [] without it."""
    p = canary_result(report)
    if p is None:
        return []
    details = canary_details(p)
    if isinstance(details, str):
        return [f"{_UNREADABLE}{details} (verdict {p.verdict.value}: {p.reason or 'no reason given'})"]
    if p.verdict == ProbeVerdict.PASS:
        summary = details.summary or "every canary episode matches the reference"
        return [f"simulator canary: pass ({summary}; versions {_versions(details.versions_here)})"]
    if p.verdict == ProbeVerdict.NOT_AVAILABLE:
        return [f"simulator canary: not available ({p.reason})"]
    if not details.moved:  # the Job failed before it judged anything
        return [f"simulator canary: FAILED to run ({p.reason})"]
    lines = [f"simulator canary: DRIFT: {details.summary or p.reason}"]
    lines += [f"  moved: {m}" for m in details.moved]
    lines.append(f"  versions here: {_versions(details.versions_here)}")
    lines.append(f"  versions of the reference: {_versions(details.versions_reference)}")
    return lines


def canary_message_lines(report: CheckpointReport) -> list[str]:
    """For the summary message: the canary only when it failed or cannot be read, its moved episodes shortened."""
    p = canary_result(report)
    if p is None:
        return []
    if p.verdict != ProbeVerdict.FAIL:
        unreadable = [line for line in canary_lines(report) if line.startswith(_UNREADABLE)]
        return unreadable
    lines = canary_lines(report)
    moved = [line for line in lines if line.startswith("  moved: ")]
    if len(moved) > MAX_MOVED_IN_MESSAGE:
        keep = set(moved[:MAX_MOVED_IN_MESSAGE])
        lines = [line for line in lines if not line.startswith("  moved: ") or line in keep]
        lines.insert(1 + MAX_MOVED_IN_MESSAGE, f"  ... and {len(moved) - MAX_MOVED_IN_MESSAGE} more (see the report)")
    return lines
