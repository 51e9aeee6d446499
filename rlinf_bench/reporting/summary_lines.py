"""The lines of the summary message, as plain text before escaping: what a reader acts on.

Shared by the email text and the Slack payload (:mod:`rlinf_bench.reporting.notify`), which escape
each line for their sink. Suite SRs with ± and interval, the decisive verdicts, why the others are not
decisive, what changed (flipped states, provenance, robustness and failure reasons when they moved), failures
with their reason, and the infrastructure
checks of every probe (those that failed or have a target; for the others one line saying why they decided
nothing). Measured values without a target stay in the report.
"""

from __future__ import annotations

from collections import Counter

from rlinf_bench.contracts import CheckpointReport, InfraCheck, SuiteReport, Verdict, VerdictValue
from rlinf_bench.reporting.canary import canary_message_lines, is_canary_probe
from rlinf_bench.reporting.format import (
    DECISIVE,
    changes_text,
    human,
    interval,
    mde_text,
    mean_std,
    pvalue,
    verdict_against,
    verdict_word,
)
from rlinf_bench.reporting.infra_rows import check_word
from rlinf_bench.reporting.infra_strip import STATE_WORDS, ProbeChip, infra_strip
from rlinf_bench.reporting.message_limits import ERROR_TEXT_MAX_CHARS, cut, cut_at_word
from rlinf_bench.reporting.probe_scope import DEMO_SIZE
from rlinf_bench.reporting.robustness_text import move_line, signed_pts
from rlinf_bench.stats.flips import flip_summary

__all__ = ["REASON_MAX_CHARS", "infra_lines", "robustness_line", "suite_head", "suite_lines", "verdict_line"]

#: Failure-reason moves named in a message line; the others are in the report.
MOVES_IN_A_LINE = 2

#: A non-decisive verdict's reason in a message: enough for "max steps 20 vs 512 (...); for a verdict, <the
#: user's lever>" (rlinf_local/origin.py keeps the levers short); longer is cut at a word, whole in the report.
REASON_MAX_CHARS = 240


def suite_head(s: SuiteReport) -> str:
    """``libero_spatial: 57.3 ± 1.2% (95% CI [50.1, 60.2]), 3/3 runs, 1500 episodes``."""
    return (
        f"{s.suite}: {mean_std(s)} (95% CI {interval(s.ci95_low, s.ci95_high)}), "
        f"{s.runs_completed}/{s.runs_expected} runs, {s.episodes} episodes"
    )


def verdict_line(v: Verdict) -> str:
    """A decisive verdict with its difference, p and MDE; any other with why it decided nothing."""
    head = f"{verdict_word(v)} vs {verdict_against(v)}"
    if v.value in DECISIVE:
        diff = "" if v.difference is None else f"{100 * v.difference:+.1f} pts, "
        changed = (
            f"; environment changed: {changes_text(v)}"
            if v.kind != "baseline" and v.environment_changes and v.value == VerdictValue.BELOW
            else ""
        )
        # the p of the test that decided: "above" is the one-sided test for a gain, the others the one for a drop
        p = v.p_value_above if v.value == VerdictValue.ABOVE and v.p_value_above is not None else v.p_value
        return f"{head}: {diff}p = {pvalue(p)}, sees drops ≥ {mde_text(v)}{changed}"
    reason = v.reason
    if v.value == VerdictValue.INCONCLUSIVE:
        reason = reason.split("; ", 1)[1] if "; " in reason else ""  # the phrase is in the word already
    return f"{head}: {cut_at_word(reason, REASON_MAX_CHARS)}" if reason else head


def suite_lines(s: SuiteReport) -> list[str]:
    """One suite: its head, then indented verdicts (suite-level; per-task ones only when below), failed runs,
    disagreement, flips and provenance changes."""
    lines = [suite_head(s)]
    shown = [v for v in s.verdicts if v.task is None or v.value == VerdictValue.BELOW]
    hidden = len(s.verdicts) - len(shown)
    lines += [f"  {verdict_line(v)}" for v in shown]
    if hidden:
        lines.append(f"  {hidden} per-task verdict(s) not below: in the report")
    for r in s.runs:
        if r.status.value != "complete":
            lines.append(
                f"  run {r.run_index}: {r.status.value} - {cut(r.error or 'no reason given', ERROR_TEXT_MAX_CHARS)}"
            )
    if s.disagreement is not None and s.disagreement.flagged:
        lines.append(f"  WARNING: runs disagree beyond binomial noise (p = {pvalue(s.disagreement.p_value)})")
    lines += [f"  flipped: {line} (vs {s.flips_against})" for line in flip_summary(s)]
    for v in s.verdicts:
        if v.kind != "baseline" and v.environment_changes and v.value != VerdictValue.BELOW:
            lines.append(f"  environment changed vs {verdict_against(v)}: {changes_text(v)}")
    robustness = robustness_line(s)
    if robustness:
        lines.append(f"  {robustness}")
    flagged = [t for t in s.tasks if t.disagreement is not None and t.disagreement.flagged]
    lines += [
        f"  task {t.task_id} ({t.task_name}): runs disagree (adjusted p = {pvalue(t.disagreement.p_adjusted)})"
        for t in flagged
        if t.disagreement is not None
    ]
    return lines


def robustness_line(s: SuiteReport) -> str | None:
    """One line when something moved against the previous checkpoint, else None: the axes that fell decisively
    (verdict below), the flag when the standard SR rose meanwhile, and the failure reasons that moved beyond
    noise (Holm-corrected): ``robustness vs global_step 400: camera ▼ below (-14.0 pts, p = 0.0031) while the
    standard SR rose +3.1 pts; 12 more grasp failed on task 3 (name) than at global_step 400 (4 → 16)``."""
    parts: list[str] = []
    against = ""
    section = s.robustness
    if section is not None:
        for a in section.verdicts:
            if a.verdict.value == VerdictValue.BELOW:
                against = a.verdict.reference_label
                v = a.verdict
                parts.append(f"{a.axis} {verdict_word(v)} ({signed_pts(v.difference)}, p = {pvalue(v.p_value)})")
        if section.flag is not None and parts:
            parts[-1] += f" while the standard SR rose {signed_pts(section.flag.sr_difference)}"
    reasons = s.failure_reasons
    moved = [m for m in reasons.moves if m.decisive] if reasons is not None else []
    if reasons is not None and moved:
        against = against or reasons.against
        parts += [move_line(m, reasons.against) for m in moved[:MOVES_IN_A_LINE]]
        if len(moved) > MOVES_IN_A_LINE:
            parts.append(f"{len(moved) - MOVES_IN_A_LINE} more failure reason(s) moved: in the report")
    return f"robustness vs {against}: " + "; ".join(parts) if parts else None


def _check_line(c: InfraCheck) -> str:
    name = c.probe if c.metric == "—" else f"{c.probe}.{c.metric}"
    target = f" (target {c.op} {human(c.target, c.unit)})" if c.target is not None else ""
    word = check_word(c)
    return f"{name}: {human(c.value, c.unit)}{target}: {'FAIL' if word == 'fail' else word}"


def _probe_lines(chip: ProbeChip, checks: list[InfraCheck]) -> list[str]:
    """A probe's checks that failed or have a target, one line each, then why it decided nothing; a probe
    with none of those gets one line saying what it measured or why it measured nothing."""
    shown = [c for c in checks if c.value is not None and (c.verdict == "fail" or c.target is not None)]
    lines = [_check_line(c) for c in shown]
    if chip.state == "notdecided":
        lines.append(f"  ({chip.title.removeprefix(DEMO_SIZE).lstrip(': ')})")
    elif not shown and chip.state == "measured":
        first = next(c for c in checks if c.value is not None)  # the probe's headline value
        lines.append(f"{chip.probe}.{first.metric}: {human(first.value, first.unit)}: {chip.title or 'no target'}")
    elif not shown:
        failed = chip.state == "fail"
        lines.append(f"{chip.probe}: {'FAIL' if failed else 'nothing measured'}" + (f" - {_why(checks)}"))
    return lines


def _why(checks: list[InfraCheck]) -> str:
    return next((c.reason for c in checks if c.reason), "no reason given")


def infra_lines(report: CheckpointReport) -> list[str]:
    """Every probe under a header that counts them by state, each with the checks that failed or have a target
    (or why it decided nothing); [] without probes."""
    # the simulator canary speaks only when it failed, in its own words (rlinf_bench.reporting.canary)
    checks = [c for c in report.infra if not is_canary_probe(c.probe)]
    canary = canary_message_lines(report)
    if not checks:
        return canary
    chips = infra_strip(checks)
    counts = Counter(chip.state for chip in chips)
    states = ", ".join(f"{counts[state]} {word}" for state, word in STATE_WORDS.items() if counts[state])
    lines = [f"Infrastructure, {len(chips)} probe{'s' if len(chips) != 1 else ''}: {states}"]
    for chip in chips:
        lines += [f"  {line}" for line in _probe_lines(chip, [c for c in checks if c.probe == chip.probe])]
    return lines + canary
