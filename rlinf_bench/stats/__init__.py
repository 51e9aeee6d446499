"""Statistics of success rates over repeated evaluation runs (see docs/statistics.md)."""

from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint, aggregate_suite, load_probes, load_runs
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
from rlinf_bench.stats.verdicts import VerdictConfig, apply_verdicts, baseline_verdicts, reference_verdict

__all__ = [
    "CLUSTERED_METHOD",
    "ClusteredEstimate",
    "ComparisonOutcome",
    "HomogeneityOutcome",
    "SourcedRun",
    "VerdictConfig",
    "aggregate_checkpoint",
    "aggregate_suite",
    "apply_verdicts",
    "baseline_verdicts",
    "chi2_homogeneity",
    "clustered_interval",
    "cochran_q",
    "compare_to_constant",
    "load_probes",
    "load_runs",
    "paired_test",
    "reference_verdict",
    "two_proportion_test",
    "wilson",
]
