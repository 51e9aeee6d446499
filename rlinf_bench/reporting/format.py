"""Small formatting helpers shared by every renderer (markdown, HTML, email, Slack)."""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_bench.contracts import CheckpointReport, SuiteReport, Verdict, VerdictValue

VERDICT_MARK = {
    VerdictValue.ABOVE: "▲ above",
    VerdictValue.WITHIN: "● within",
    VerdictValue.BELOW: "▼ below",
    VerdictValue.INCOMPLETE: "◌ incomplete",
    VerdictValue.NOT_COMPARABLE: "≠ not comparable",
    VerdictValue.INCONCLUSIVE: "◇ inconclusive",
}
#: The verdicts that answer the question "is it worse, as good, better?"; the others say why not.
DECISIVE = (VerdictValue.BELOW, VerdictValue.WITHIN, VerdictValue.ABOVE)


def table_row(cells: Sequence[object]) -> str:
    """One Markdown table row. Cells holding user text are escaped by the caller (``text_safety.markdown``);
    ours hold only numbers and our own words."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def pct(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage string; '—' when absent."""
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def human(value: float | None, unit: str = "") -> str:
    """A measured value for people: ``255 MB/s``, ``2``, ``85.2%``, ``0.0123 s``; ``not measured`` when absent.

    Counts carry no unit ("2", not "2.0 count"); three significant digits at most below 100.
    """
    if value is None:
        return "not measured"
    if float(value).is_integer() and abs(value) < 1e15:
        number = f"{int(value):,}"
    elif abs(value) >= 100:
        number = f"{value:,.0f}"
    elif abs(value) >= 10:
        number = f"{value:.1f}"
    else:
        number = f"{value:.3g}"
    unit = "" if unit in ("count", "") else unit
    if not unit:
        return number
    return f"{number}{unit}" if unit == "%" else f"{number} {unit}"


def interval(low: float | None, high: float | None) -> str:
    """An interval of fractions in percent, each end with its unit: ``[50.1%, 60.2%]``."""
    return "—" if low is None or high is None else f"[{100 * low:.1f}%, {100 * high:.1f}%]"


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
    """What a verdict was measured against, with its caveat: ``libero/x (decoding differs: greedy vs sampled T=1.6)``."""
    target = v.against if v.kind == "baseline" else f"{v.kind} ({v.reference_label})"
    target = f"{target} / {v.task}" if v.task else target
    return f"{target} ({v.caveat})" if v.caveat else target


def checkpoint_title(report: CheckpointReport) -> str:
    step = f"global_step {report.global_step}" if report.global_step is not None else "checkpoint"
    exp = f"{report.experiment} " if report.experiment else ""
    return f"{exp}{step}"


def verdict_word(v: Verdict) -> str:
    """The mark and word of a verdict; an underpowered one says what it could see:
    ``◇ inconclusive (underpowered: sees drops ≥ 152.0 pts)``."""
    if v.value == VerdictValue.INCONCLUSIVE and v.mde is not None:
        return f"{VERDICT_MARK[v.value]} (underpowered: sees drops ≥ {100 * v.mde:.1f} pts)"
    return VERDICT_MARK[v.value]


def _names(verdicts: list[Verdict]) -> str:
    seen = dict.fromkeys(v.against if v.kind == "baseline" else v.kind for v in verdicts)
    return ", ".join(seen)


def _why_none(verdicts: list[Verdict]) -> str:
    """Why no verdict is decisive: ``the only reference was not comparable``, or the counts of each reason."""
    if not verdicts:
        return "no reference (no baseline selected and no earlier checkpoint)"
    words = {
        VerdictValue.NOT_COMPARABLE: "not comparable",
        VerdictValue.INCONCLUSIVE: "inconclusive",
        VerdictValue.INCOMPLETE: "incomplete",
    }
    if len(verdicts) == 1:
        return f"the only reference was {words[verdicts[0].value]}"
    counts = {w: sum(v.value == value for v in verdicts) for value, w in words.items()}
    return ", ".join(f"{n} {w}" for w, n in counts.items() if n)


def headline(report: CheckpointReport) -> str:
    """One line for subjects and notifications: SR, then the decisive verdicts only (below first), or
    plainly that none was reached and why: ``SR 0.0% — no decisive verdict: the only reference was not
    comparable``; then the robustness flag when up: ``; SR rose while camera fell``."""
    verdicts = report.verdicts
    decisive = [v for v in verdicts if v.value in DECISIVE]
    parts = []
    for value, word in ((VerdictValue.BELOW, "BELOW"), (VerdictValue.WITHIN, "within"), (VerdictValue.ABOVE, "above")):
        these = [v for v in decisive if v.value == value]
        if these:
            parts.append(f"{word} {_names(these)}")
    said = "; ".join(parts) if parts else f"no decisive verdict: {_why_none(verdicts)}"
    if any(v.value == VerdictValue.BELOW and v.environment_changes for v in verdicts):
        said += "; environment changed"  # the first thing to know about a regression
    fell = [a for s in report.suites if s.robustness and s.robustness.flag for a in s.robustness.flag.axes]
    if fell:  # the robustness flag (docs/robustness.md): better on the standard tasks, more brittle
        said += f"; SR rose while {', '.join(dict.fromkeys(fell))} fell"
    status = "" if report.complete else "INCOMPLETE, "
    return f"{checkpoint_title(report)}: SR {pct(report.success_rate)} — {status}{said}"


def mde_text(v: Verdict) -> str:
    """``sees ≥ 3.1 pts`` : the drop the verdict's test catches with 80 % power ('—' without a test)."""
    return "—" if v.mde is None else f"{100 * v.mde:.1f} pts"


def verdict_note(v: Verdict) -> str:
    """What to read next to a verdict: the reason (an environment change comes first), else the test."""
    if v.reason and v.test:
        return f"{v.reason} ({v.test})"
    return v.reason or v.test


def changes_text(v: Verdict) -> str:
    """``torch 2.5.1 → 2.6.0; gpu A100 → H200``, or 'no change recorded'."""
    if not v.environment_changes:
        return "no change recorded"
    return "; ".join(f"{c.field.removeprefix('package ')} {c.before} → {c.now}" for c in v.environment_changes)
