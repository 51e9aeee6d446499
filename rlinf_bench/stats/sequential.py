"""Apply the adaptive budget's group-sequential boundaries to a report's verdicts (``--adaptive``).

With the fixed protocol a verdict compares each one-sided p-value with alpha. Under the adaptive budget
the report of round k is one look of a sequence: a test is decided only past the look's boundary (or
when it is futile), and a suite whose regression question is still open gets ``continue``: evaluate
one more round. See :mod:`rlinf_bench.stats.adaptive` and docs/statistics.md.
"""

from __future__ import annotations

from rlinf_bench.contracts import AdaptiveStatus, CheckpointReport, SuiteReport, Verdict, VerdictValue
from rlinf_bench.stats.adaptive import AdaptiveDesign, Look, look
from rlinf_bench.stats.power_words import mark_underpowered, unmark_underpowered

__all__ = ["apply_adaptive"]

_VALUES = {"below": VerdictValue.BELOW, "above": VerdictValue.ABOVE, "within": VerdictValue.WITHIN}


def _tested(v: Verdict) -> bool:
    return v.p_value is not None and v.p_value_above is not None and v.value in _VALUES.values()


def _suite(suite: SuiteReport, design: AdaptiveDesign) -> None:
    rounds = suite.runs_completed
    if not suite.complete or rounds < 1:
        return  # incomplete verdicts stay incomplete: a failed round is re-run, not skipped
    if rounds > design.max_rounds:
        suite.adaptive = AdaptiveStatus(
            rounds=rounds,
            max_rounds=design.max_rounds,
            boundary_z=design.boundary(design.max_rounds),
            decision="stop",
            reason=f"{rounds} rounds exceed the design's {design.max_rounds}: fixed-protocol verdicts kept",
        )
        return
    unmark_underpowered(suite.verdicts)  # the test is re-decided at this look, then worded again
    _decide_look(suite, design, rounds)
    mark_underpowered(suite.verdicts)


def _decide_look(suite: SuiteReport, design: AdaptiveDesign, rounds: int) -> None:
    looks: list[tuple[Verdict, Look]] = [
        (v, look(design, rounds, v.p_value, v.p_value_above))  # type: ignore[arg-type]
        for v in suite.verdicts
        if _tested(v)
    ]
    stop = design.stop([lk for _, lk in looks])
    for v, lk in looks:
        if lk.value != "open":
            v.value = _VALUES[lk.value]
        else:  # still open: "within" once the design stops (last look, or only "above" left open)
            v.value = VerdictValue.WITHIN if stop else VerdictValue.INCOMPLETE
        note = f"adaptive round {rounds}/{design.max_rounds}: boundary z {lk.boundary:.2f}"
        if v.value == VerdictValue.INCOMPLETE:
            note += "; undecided: evaluate another round"
        v.reason = f"{v.reason}; {note}" if v.reason else note
    open_ = [f"{v.against}" for v, lk in looks if v.value == VerdictValue.INCOMPLETE]
    suite.adaptive = AdaptiveStatus(
        rounds=rounds,
        max_rounds=design.max_rounds,
        boundary_z=design.boundary(rounds),
        decision="stop" if stop else "continue",
        reason=(
            f"decided after {rounds} round(s)"
            if stop
            else f"borderline vs {', '.join(open_)}: evaluate round {rounds + 1} (run index {rounds})"
        ),
    )


def apply_adaptive(report: CheckpointReport, design: AdaptiveDesign | None = None) -> CheckpointReport:
    """Re-decide every suite's tested verdicts as look k = completed rounds of ``design`` (in place)."""
    design = design or AdaptiveDesign()
    for suite in report.suites:
        _suite(suite, design)
    return report
