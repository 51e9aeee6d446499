"""The report's infrastructure section at a glance: one chip per probe, with what failed or why it decided nothing.

The table of every measurement stays on the page, folded under the strip: a reader asks "is the cluster
healthy?" first and looks at 25 numbers only when the answer is no. The summary message's infrastructure
block counts the same chips, so its header and its lines name the same probes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from rlinf_bench.contracts import InfraCheck
from rlinf_bench.reporting.format import human
from rlinf_bench.reporting.infra_rows import check_word, undecided

__all__ = ["STATE_WORDS", "ProbeChip", "infra_strip"]

ChipState = Literal["fail", "pass", "notdecided", "measured", "notrun"]

#: How a message counts the chips of each state, worst first: ``1 FAILED, 2 not decided``.
STATE_WORDS: dict[ChipState, str] = {
    "fail": "FAILED",
    "pass": "passed",
    "notdecided": "not decided",
    "measured": "measured without a target",
    "notrun": "nothing measured",
}


class ProbeChip(BaseModel):
    """One probe in the strip: its state and the words next to it."""

    probe: str
    state: ChipState
    text: str
    title: str = ""


def _failed_text(c: InfraCheck) -> str:
    target = "" if c.target is None else f" (target {c.op} {human(c.target, c.unit)})"
    return f"{c.metric} {human(c.value, c.unit)}{target}"


def _chip(probe: str, checks: list[InfraCheck]) -> ProbeChip:
    failed = [c for c in checks if c.verdict == "fail"]
    passed = [c for c in checks if c.verdict == "pass"]
    open_ = [c for c in checks if undecided(c)]
    if failed:
        return ProbeChip(probe=probe, state="fail", text="✗ " + ", ".join(_failed_text(c) for c in failed))
    if open_:
        return ProbeChip(probe=probe, state="notdecided", text=check_word(open_[0]), title=open_[0].reason)
    if passed:
        return ProbeChip(probe=probe, state="pass", text=f"✓ {len(passed)} target{'s' if len(passed) > 1 else ''} met")
    if any(c.value is not None for c in checks):
        why = next((c.reason for c in checks if c.reason and c.reason != "no target for this metric"), "")
        return ProbeChip(probe=probe, state="measured", text="measured, no target", title=why)
    why = next((c.reason for c in checks if c.reason), "")
    return ProbeChip(probe=probe, state="notrun", text="nothing measured", title=why)


def infra_strip(checks: Sequence[InfraCheck]) -> list[ProbeChip]:
    """One chip per probe, in the order the checks list the probes."""
    by_probe: dict[str, list[InfraCheck]] = {}
    for c in checks:
        by_probe.setdefault(str(c.probe), []).append(c)
    return [_chip(probe, rows) for probe, rows in by_probe.items()]
