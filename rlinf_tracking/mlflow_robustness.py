"""What MLflow holds of robustness and failure reasons: metrics a chart can follow over global steps, and tags
with the verdicts per axis (docs/reporting.md, "What MLflow holds").

- ``robustness/<axis>/<level>``: success rate under that perturbation over every suite of the checkpoint (the
  paired episodes); ``robustness/<axis>/<level>/<suite>`` per suite;
- ``robustness_drop/<axis>/<level>`` (and ``/<suite>``): control − perturbed on the same pairs (positive: worse);
- ``robustness_category/<suite>/<category>`` and ``.../total``: the category table's row (native axes);
  ``robustness_published/<suite>/<category>`` and ``.../total`` for a published robustness suite's variants;
- ``failure_reasons/<suite>/<reason>`` and ``failure_reasons/<suite>/<task>/<reason>``: failures by reason
  (standard episodes; zero counts are not logged);
- tags ``robustness_verdict/<suite>/<axis>`` (above, within, below, ...) and ``rlinf_bench.robustness_flag``
  (the axes that fell while the standard SR rose, when the flag is up).
"""

from __future__ import annotations

from collections import defaultdict

from rlinf_bench.contracts import CheckpointReport
from rlinf_tracking import mlflow_names as names

__all__ = ["TAG_ROBUSTNESS_FLAG", "robustness_metrics", "robustness_tags"]

TAG_ROBUSTNESS_FLAG = "rlinf_bench.robustness_flag"


def _levels(report: CheckpointReport) -> dict[str, float]:
    out: dict[str, float] = {}
    pooled: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for s in report.suites:
        for row in s.robustness.levels if s.robustness else []:
            axis, level = row.axis.value, str(row.level)
            out[names.metric_key("robustness", axis, level, s.suite)] = row.success_rate
            out[names.metric_key("robustness_drop", axis, level, s.suite)] = row.drop
            totals = pooled[(axis, row.level)]
            totals[0] += row.episodes
            totals[1] += row.successes
            totals[2] += row.control_successes
    for (axis_name, level_no), (n, k, control) in pooled.items():
        out[names.metric_key("robustness", axis_name, str(level_no))] = k / n
        out[names.metric_key("robustness_drop", axis_name, str(level_no))] = (control - k) / n
    return out


def robustness_metrics(report: CheckpointReport) -> dict[str, float]:
    """Every robustness and failure-reason metric of ``report`` (empty when it has neither)."""
    out = _levels(report)
    for s in report.suites:
        if s.robustness is not None:
            for c in [*s.robustness.categories, *s.robustness.totals]:
                prefix = "robustness_category" if c.source == "native" else "robustness_published"
                out[names.metric_key(prefix, s.suite, c.category)] = c.success_rate
        if s.failure_reasons is not None:
            per_suite: dict[str, int] = defaultdict(int)
            for t in s.failure_reasons.tasks:
                for reason, n in t.counts.items():
                    out[names.metric_key("failure_reasons", s.suite, t.task_name, reason.value)] = float(n)
                    per_suite[reason.value] += n
            for reason_name, n in per_suite.items():
                out[names.metric_key("failure_reasons", s.suite, reason_name)] = float(n)
    return out


def robustness_tags(report: CheckpointReport) -> dict[str, str]:
    """The verdict per axis of each suite, and the flag's axes when it is up."""
    tags: dict[str, str] = {}
    fell: list[str] = []
    for s in report.suites:
        if s.robustness is None:
            continue
        for a in s.robustness.verdicts:
            tags[names.metric_key("robustness_verdict", s.suite, a.axis)] = a.verdict.value.value
        if s.robustness.flag is not None:
            fell += [f"{s.suite}/{axis}" for axis in s.robustness.flag.axes]
    if fell:
        tags[TAG_ROBUSTNESS_FLAG] = ", ".join(fell)
    return tags
