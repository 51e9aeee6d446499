"""Small formatting helpers shared by every renderer (markdown, HTML, email, Slack)."""

from __future__ import annotations

from rlinf_bench.contracts import CheckpointReport, SuiteReport, Verdict, VerdictValue

VERDICT_MARK = {
    VerdictValue.ABOVE: "▲ above",
    VerdictValue.WITHIN: "● within",
    VerdictValue.BELOW: "▼ below",
    VerdictValue.INCOMPLETE: "◌ incomplete",
    VerdictValue.NOT_COMPARABLE: "≠ not comparable",
}


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage string; '—' when absent."""
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def interval(low: float | None, high: float | None) -> str:
    return "—" if low is None or high is None else f"[{100 * low:.1f}, {100 * high:.1f}]"


def mean_std(suite: SuiteReport) -> str:
    if suite.success_rate_mean is None:
        return "—"
    std = "" if suite.success_rate_std is None else f" ± {100 * suite.success_rate_std:.1f}"
    return f"{100 * suite.success_rate_mean:.1f}{std}%"


def pvalue(p: float | None) -> str:
    if p is None:
        return "—"
    return "<1e-4" if p < 1e-4 else f"{p:.4f}"


def verdict_against(v: Verdict) -> str:
    target = v.against if v.kind == "baseline" else f"{v.kind} ({v.reference_label})"
    return f"{target} / {v.task}" if v.task else target


def checkpoint_title(report: CheckpointReport) -> str:
    step = f"global_step {report.global_step}" if report.global_step is not None else "checkpoint"
    exp = f"{report.experiment} " if report.experiment else ""
    return f"{exp}{step}"


def headline(report: CheckpointReport) -> str:
    """One line: SR, completeness and the worst verdict, for subjects and notifications."""
    worst = "no verdicts"
    order = [VerdictValue.INCOMPLETE, VerdictValue.BELOW, VerdictValue.WITHIN, VerdictValue.ABOVE]
    values = {v.value for v in report.verdicts}
    for value in order:
        if value in values:
            worst = {
                VerdictValue.INCOMPLETE: "INCOMPLETE",
                VerdictValue.BELOW: "BELOW a reference",
                VerdictValue.WITHIN: "within references",
                VerdictValue.ABOVE: "above references",
            }[value]
            break
    return f"{checkpoint_title(report)}: SR {pct(report.success_rate)} ({worst})"
