"""An adaptive budget: evaluate in rounds over the initial states and stop once the verdicts are decided.

One *round* is one run over every initial state of the suite (50 per task). After each round the
verdict tests (paired vs the previous checkpoint, score test vs a baseline) are looked at:

- **efficacy**: a one-sided test ("below", or "above") is decided when its z-statistic crosses the
  group-sequential boundary of that look. Boundaries come from the Lan–DeMets alpha-spending function
  of O'Brien–Fleming type, alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)), over information fractions
  t_k = k / max_rounds, so the chance of ever calling "below" under no drop stays at alpha however many
  looks are taken (Lan & DeMets 1983; O'Brien & Fleming 1979; Jennison & Turnbull 2000, ch. 7).
- **futility**: a test is decided "not significant" when its conditional power under the current trend
  (Lan & Wittes 1988) to cross the final boundary is below ``futility_power``. Futility stops are
  non-binding (they are not counted in the boundaries), so they can only lower the false-alarm rate.

A comparison is decided when each of its two one-sided tests is decided; evaluation stops when every
comparison is. The brief's fixed protocol (3 runs) stays the default; a suite still undecided after 3
rounds is borderline and extends, one round at a time, to at most ``max_rounds`` (6). At the last look
an undecided test is "not significant", so the verdict is ``within``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from rlinf_bench.stats.distributions import norm_cdf, norm_ppf

__all__ = [
    "AdaptiveDesign",
    "Look",
    "SideState",
    "efficacy_boundaries",
    "look",
    "obf_spending",
    "z_from_p",
]

SideState = Literal["rejected", "futile", "open"]


def obf_spending(t: float, alpha: float) -> float:
    """Lan–DeMets O'Brien–Fleming-type alpha spent by information fraction ``t`` (alpha at t = 1)."""
    if t <= 0:
        return 0.0
    return min(alpha, 2.0 - 2.0 * norm_cdf(norm_ppf(1 - alpha / 2) / math.sqrt(t)))


def _normal_pdf(x: np.ndarray, var: float) -> np.ndarray:
    return np.exp(-(x**2) / (2 * var)) / math.sqrt(2 * math.pi * var)


@lru_cache(maxsize=32)
def efficacy_boundaries(max_rounds: int, alpha: float) -> tuple[float, ...]:
    """z boundaries c_1..c_K with P(Z_j < c_j for j < k, Z_k >= c_k) = alpha(t_k) - alpha(t_{k-1}) under H0.

    Computed by recursive numerical integration over the Brownian B-value B(t) = Z sqrt(t) on a grid
    (Armitage, McPherson & Rowe 1969), the boundary interpolated within a grid cell; no simulation, no
    scipy. Checked against published Lan–DeMets values in tests/unit/stats/test_adaptive.py.
    """
    step = 0.004
    grid = np.arange(-12.0, 12.0 + step / 2, step)
    times = [k / max_rounds for k in range(1, max_rounds + 1)]
    bounds: list[float] = []
    density: np.ndarray | None = None  # density of B(t_{k-1}) on the grid, restricted to "not stopped"
    prev_t = 0.0
    spent = 0.0
    for t in times:
        target = obf_spending(t, alpha) - spent
        dt = t - prev_t
        if density is None:
            new = _normal_pdf(grid, dt)
        else:
            half = math.ceil(9 * math.sqrt(dt) / step)
            kernel = _normal_pdf(np.arange(-half, half + 1) * step, dt)
            new = np.convolve(density, kernel, mode="same") * step
        # Upper-tail mass beyond each grid point (trapezoid-free: cell masses); find where it equals target.
        tail = np.cumsum((new * step)[::-1])[::-1]
        idx = int(np.searchsorted(-tail, -target, side="left"))
        idx = min(max(idx, 1), len(grid) - 1)
        # Linear interpolation between the grid points that bracket the target mass.
        hi_mass, lo_mass = float(tail[idx - 1]), float(tail[idx])
        frac = 0.0 if hi_mass == lo_mass else (hi_mass - target) / (hi_mass - lo_mass)
        b = float(grid[idx - 1] - step / 2 + frac * step)  # cell masses sit on [g - step/2, g + step/2]
        bounds.append(b / math.sqrt(t))
        spent += target
        density = np.where(grid < b, new, 0.0)
        prev_t = t
    return tuple(bounds)


def z_from_p(p: float) -> float:
    """The one-sided z-statistic of a one-sided p-value (clipped away from 0 and 1)."""
    return norm_ppf(1 - min(max(p, 1e-15), 1 - 1e-15))


@dataclass(frozen=True)
class AdaptiveDesign:
    """Rounds, alpha and futility threshold of the adaptive budget (defaults: docs/statistics.md)."""

    max_rounds: int = 6
    min_rounds: int = 1
    planned_rounds: int = 3  # the brief's fixed protocol: past it, an open test is "borderline"
    alpha: float = 0.05
    futility_power: float = 0.20  # chosen by bench/adaptive_budget.py (docs/statistics.md)

    def __post_init__(self) -> None:
        if not 1 <= self.min_rounds <= self.planned_rounds <= self.max_rounds:
            raise ValueError("need 1 <= min_rounds <= planned_rounds <= max_rounds")
        if not 0 < self.alpha < 0.5 or not 0 <= self.futility_power < 1:
            raise ValueError("alpha in (0, 0.5) and futility_power in [0, 1)")

    def stop(self, looks: list[Look]) -> bool:
        """Stop after this round? Before the planned rounds: when every comparison is decided. From the
        planned rounds on, an open "above" side no longer extends the evaluation: extra rounds are spent
        only where a regression is borderline, the question a "below" verdict answers."""
        if not looks:
            return True
        round_ = looks[0].round
        if round_ >= self.max_rounds:
            return True
        if round_ < self.planned_rounds:
            return all(lk.decided for lk in looks)
        return all(lk.below != "open" for lk in looks)

    def boundary(self, round_: int) -> float:
        """The efficacy boundary (z) at look ``round_`` (1-based)."""
        return efficacy_boundaries(self.max_rounds, self.alpha)[round_ - 1]

    def side(self, z: float, round_: int) -> SideState:
        """Whether a one-sided test with statistic ``z`` is decided at this look."""
        if round_ > self.max_rounds:
            raise ValueError(f"round {round_} is past max_rounds {self.max_rounds}")
        if z >= self.boundary(round_):
            return "rejected"
        if round_ == self.max_rounds:
            return "futile"
        t = round_ / self.max_rounds
        final = self.boundary(self.max_rounds)
        b = z * math.sqrt(t)
        drift = b / t  # the current trend, in B-value units per unit information
        power = 1.0 - norm_cdf((final - b - drift * (1 - t)) / math.sqrt(1 - t))
        return "futile" if power < self.futility_power and round_ >= self.min_rounds else "open"


@dataclass(frozen=True)
class Look:
    """What one look decided for one comparison."""

    round: int
    below: SideState
    above: SideState
    boundary: float

    @property
    def decided(self) -> bool:
        """Both one-sided tests settled (rejected or futile)."""
        return "open" not in (self.below, self.above)

    @property
    def value(self) -> Literal["below", "above", "within", "open"]:
        """The verdict this look gives ("open" while undecided)."""
        if self.below == "rejected":
            return "below"
        if self.above == "rejected":
            return "above"
        return "within" if self.decided else "open"


def look(design: AdaptiveDesign, round_: int, p_below: float, p_above: float) -> Look:
    """Apply the design's boundaries to one comparison's two one-sided p-values after ``round_`` rounds."""
    below = design.side(z_from_p(p_below), round_)
    above = design.side(z_from_p(p_above), round_)
    if below == "rejected":
        above = "futile"  # the drop is established; "above" cannot also hold
    elif above == "rejected":
        below = "futile"
    return Look(round_, below, above, design.boundary(round_))
