"""A verdict: one comparison of a success rate with a reference (a published number, an earlier checkpoint),
with the test that decided it. Shared by the suite's verdicts and the robustness section's per-axis verdicts.

The decision rule is in docs/statistics.md; this module only fixes the shape.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.limits import Message, Name

__all__ = ["ProvenanceChange", "Verdict", "VerdictValue"]


class VerdictValue(StrEnum):
    ABOVE = "above"  # significantly above the reference
    WITHIN = "within"  # no evidence of being worse than reference - tolerance (nor better than the reference)
    BELOW = "below"  # significantly below reference - tolerance
    INCOMPLETE = "incomplete"  # runs missing or failed: no verdict is given on partial data
    NOT_COMPARABLE = "not_comparable"  # the reference was measured under another protocol (max steps, settle...)
    # neither below nor above, but the test could not see a drop that matters (MDE > tolerance + 5 points)
    INCONCLUSIVE = "inconclusive"


class ProvenanceChange(BaseModel):
    """One provenance field that differs between this checkpoint's runs and the reference's."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(description="e.g. package torch, rendering backend, policy precision, gpu")
    category: Literal["packages", "simulator", "policy", "infrastructure"]
    before: str
    now: str


class Verdict(BaseModel):
    """One comparison with a reference, with the test that decided it."""

    model_config = ConfigDict(extra="forbid")

    suite: Name
    task: Name | None = Field(default=None, description="Task name, for per-task baselines")
    against: Name = Field(description="Baseline name, 'previous' or 'best'")
    kind: Literal["baseline", "previous", "best"]
    value: VerdictValue
    reference: float | None = Field(default=None, description="Reference success rate (fraction)")
    reference_label: str = Field(default="", description="e.g. the reference checkpoint's global step")
    estimate: float | None = None
    difference: float | None = Field(default=None, description="estimate - reference")
    tolerance: float = Field(ge=0)
    alpha: float
    test: str = ""
    statistic: float | None = None
    p_value: float | None = Field(default=None, description="One-sided p for 'below reference - tolerance'")
    p_value_above: float | None = Field(default=None, description="One-sided p for 'above reference'")
    paired: bool = False
    units: int = Field(default=0, description="Initial-state clusters (paired) or effective episodes compared")
    reason: Message = ""
    caveat: Message = Field(
        default="",
        description="A difference from the reference that leaves the verdict standing but must be read with it, "
        "e.g. 'decoding differs: greedy vs sampled T=1.6' (differences in max steps or settle are not_comparable)",
    )
    mde: float | None = Field(
        default=None,
        description="Smallest drop below the reference (fraction, tolerance included) this test detects with "
        "80 % power at its alpha and budget, from the observed per-state variance",
    )
    environment_changes: list[ProvenanceChange] = Field(
        default_factory=list, description="Provenance that differs from the reference checkpoint (previous/best)"
    )
