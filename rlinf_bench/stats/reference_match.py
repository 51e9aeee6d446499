"""Whether two suite reports measured the same thing: same suite, task set, trials per task and protocol.

A suite's success rate averages its tasks, and tasks differ far more in difficulty than checkpoints do:
a checkpoint evaluated on tasks {0, 1} set against one evaluated on all ten compares two task mixes,
not two policies. Verdicts against the previous and the best checkpoint are decided only when
:func:`reference_differences` is empty; otherwise they are ``not_comparable`` with these differences named.

Decoding (greedy vs sampled) is not among them: it leaves an episode what it was (same steps, same
start), as against a published baseline, so the verdict is given and :func:`reference_caveat` is stated on it.
"""

from __future__ import annotations

from rlinf_bench.contracts import SuiteReport
from rlinf_bench.protocols import RunProtocol, short_decoding

__all__ = ["format_ids", "reference_caveat", "reference_differences", "task_ids"]


def task_ids(suite: SuiteReport) -> set[int]:
    """The tasks a suite report holds outcomes for."""
    return {t.task_id for t in suite.tasks} | {s.task_id for s in suite.states}


def format_ids(ids: set[int]) -> str:
    """``0-9`` for a range, ``{0, 1}`` otherwise (ranges of three or more collapsed: ``{0-4, 7}``)."""
    ordered = sorted(ids)
    if not ordered:
        return "{}"
    parts: list[str] = []
    start = prev = ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(f"{start}-{prev}" if prev - start >= 2 else ", ".join(str(x) for x in range(start, prev + 1)))
        if i is not None:
            start = prev = i
    if len(parts) == 1 and "-" in parts[0]:
        return parts[0]
    return "{" + ", ".join(parts) + "}"


def _protocol_differences(now: RunProtocol, before: RunProtocol) -> list[str]:
    out = []
    for field, label in (
        ("max_steps", "max steps"),
        ("settle_steps", "settle steps"),
        ("settle_gripper", "settle gripper"),
        ("render_resolution", "render resolution"),
    ):
        a, b = getattr(now, field), getattr(before, field)
        if a != b:
            out.append(f"{label} differ: {a} here, {b} at the reference")
    return out


def reference_differences(current: SuiteReport, reference: SuiteReport) -> list[str]:
    """Why ``current`` cannot be compared with ``reference`` (an earlier checkpoint): one phrase per
    difference; empty when they ran the same suite, tasks, trials per task and episode settings (decoding
    aside: see :func:`reference_caveat`)."""
    out: list[str] = []
    if current.suite != reference.suite:
        out.append(f"suites differ: this checkpoint ran {current.suite}, the reference {reference.suite}")
    now, before = task_ids(current), task_ids(reference)
    if now != before:
        out.append(
            f"task sets differ: this checkpoint ran tasks {format_ids(now)}, the reference ran {format_ids(before)}"
        )
    t_now, t_before = current.trials_per_task, reference.trials_per_task
    if t_now is not None and t_before is not None and t_now != t_before:
        out.append(f"trials per task differ: {t_now} here, {t_before} at the reference")
    out.extend(_protocol_differences(current.protocol, reference.protocol))
    return out


def reference_caveat(current: SuiteReport, reference: SuiteReport) -> str:
    """``decoding differs: greedy here, sampled T=1.6 at the reference`` when the two checkpoints were
    decoded otherwise ('' when alike): the verdict stands, read with this."""
    now, before = current.protocol.decoding, reference.protocol.decoding
    if now == before:
        return ""
    return f"decoding differs: {short_decoding(now)} here, {short_decoding(before)} at the reference"
