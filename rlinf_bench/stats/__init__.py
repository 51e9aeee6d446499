"""Statistics of success rates over repeated evaluation runs (see docs/statistics.md)."""

from rlinf_bench.stats.intervals import CLUSTERED_METHOD, ClusteredEstimate, clustered_interval, wilson
from rlinf_bench.stats.significance import (
    ComparisonOutcome,
    HomogeneityOutcome,
    chi2_homogeneity,
    cochran_q,
    compare_to_constant,
    paired_test,
    two_proportion_test,
)

__all__ = [
    "CLUSTERED_METHOD",
    "ClusteredEstimate",
    "ComparisonOutcome",
    "HomogeneityOutcome",
    "chi2_homogeneity",
    "clustered_interval",
    "cochran_q",
    "compare_to_constant",
    "paired_test",
    "two_proportion_test",
    "wilson",
]
