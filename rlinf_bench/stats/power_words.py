"""Whether a ``within`` verdict could have seen a drop that matters: otherwise it is ``inconclusive``.

``within`` means "no evidence of a drop beyond the tolerance". On a small budget that is no evidence
at all: one episode per task cannot see a drop of 50 points, and "within" would reassure anyway. A
verdict whose test could not see a drop of ``tolerance + margin`` (its MDE, docs/statistics.md, is
larger) is therefore ``inconclusive`` with the reason "underpowered: sees drops ≥ X pts". The test and
its p-values are untouched: this is the word for what the test says, not another test.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlinf_bench.contracts import Verdict, VerdictValue

__all__ = ["POWER_MARGIN", "mark_underpowered", "underpowered_phrase", "unmark_underpowered"]

#: How far past the tolerance a "within" verdict's test must see (fraction): 5 points. The brief's budget
#: (10 tasks x 50 states x 3 runs) sees about 3 points past a baseline and 4.2 points against the previous
#: checkpoint (docs/statistics.md), so its verdicts keep their word; smoke budgets do not.
POWER_MARGIN = 0.05
_PREFIX = "underpowered: sees drops ≥ "


def underpowered_phrase(mde: float) -> str:
    """``underpowered: sees drops ≥ 152.0 pts`` for an MDE of 1.52."""
    return f"{_PREFIX}{100 * mde:.1f} pts"


def _is_underpowered(v: Verdict, margin: float) -> bool:
    return v.value == VerdictValue.WITHIN and v.mde is not None and v.mde > v.tolerance + margin + 1e-12


def mark_underpowered(verdicts: Iterable[Verdict], margin: float = POWER_MARGIN) -> None:
    """Turn every ``within`` whose MDE exceeds ``tolerance + margin`` into ``inconclusive`` (in place),
    the phrase first in its reason."""
    for v in verdicts:
        if _is_underpowered(v, margin):
            assert v.mde is not None
            phrase = underpowered_phrase(v.mde)
            v.value = VerdictValue.INCONCLUSIVE
            v.reason = f"{phrase}; {v.reason}" if v.reason else phrase


def unmark_underpowered(verdicts: Iterable[Verdict]) -> None:
    """Undo :func:`mark_underpowered` (the adaptive budget re-decides the test, then marks again)."""
    for v in verdicts:
        if v.value == VerdictValue.INCONCLUSIVE and v.reason.startswith(_PREFIX):
            v.value = VerdictValue.WITHIN
            _, _, rest = v.reason.partition("; ")
            v.reason = rest if "; " in v.reason else ""
