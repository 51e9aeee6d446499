"""How a test's two one-sided p-values become a verdict, and the settings of that rule (docs/statistics.md).

Shared by the success-rate verdicts (:mod:`rlinf_bench.stats.verdicts`) and the robustness verdicts per axis
(:mod:`rlinf_bench.stats.robustness_verdicts`), so "below" means the same test at the same level everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlinf_bench.contracts import VerdictValue
from rlinf_bench.stats.power_words import POWER_MARGIN
from rlinf_bench.stats.significance import ComparisonOutcome

__all__ = ["VerdictConfig", "decide"]


@dataclass(frozen=True)
class VerdictConfig:
    """Tolerances are absolute success-rate fractions (0.02 = 2 points)."""

    tolerance: float = 0.02  # vs published baselines: papers report 3-run means, small drift is expected
    tolerance_previous: float = 0.0  # vs own checkpoints: any significant drop is worth knowing
    alpha: float = 0.05
    power_margin: float = POWER_MARGIN  # within needs an MDE <= tolerance + this, else inconclusive

    def __post_init__(self) -> None:
        if not 0 <= self.tolerance < 1 or not 0 <= self.tolerance_previous < 1:
            raise ValueError("tolerances are fractions in [0, 1): 0.02 means 2 points")
        if not 0 < self.alpha < 0.5:
            raise ValueError("alpha must be in (0, 0.5)")


def decide(outcome: ComparisonOutcome, alpha: float) -> VerdictValue:
    """below when the test for a drop rejects, above when the test for a gain does, else within."""
    if outcome.p_below < alpha:
        return VerdictValue.BELOW
    if outcome.p_above < alpha:
        return VerdictValue.ABOVE
    return VerdictValue.WITHIN
