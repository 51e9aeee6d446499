"""Robustness against the previous checkpoint: a verdict per axis (and per published category), the headline flag
"the standard SR rose while an axis fell decisively", and how failure reasons moved (docs/robustness.md).

An axis's verdict is decided exactly as a suite's success rate against the previous checkpoint is: a paired
t-test over (task, initial state) clusters on the per-state success fractions, here of the perturbed episodes
under that axis (all its levels), one-sided at the verdicts' alpha with their tolerance
(:class:`~rlinf_bench.stats.decision.VerdictConfig`), underpowered ``within`` turned ``inconclusive``. Only
cells evaluated alike on both sides are paired: same task, state and level, same magnitude and seeds.
"Decisively" means that verdict is ``below``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from rlinf_bench.contracts import CheckpointReport, SuiteReport, Verdict, VerdictValue
from rlinf_bench.contracts.robustness_report import AxisVerdict, PerturbedOutcome, RobustnessFlag
from rlinf_bench.stats.decision import VerdictConfig, decide
from rlinf_bench.stats.failure_reasons import reason_moves
from rlinf_bench.stats.power import mde_paired
from rlinf_bench.stats.power_words import mark_underpowered
from rlinf_bench.stats.reference_match import reference_differences
from rlinf_bench.stats.significance import paired_test

__all__ = ["apply_robustness", "axis_verdicts", "robustness_flag"]

#: Verdicts whose test ran: their difference is an estimate worth comparing.
_TESTED = (VerdictValue.ABOVE, VerdictValue.WITHIN, VerdictValue.BELOW, VerdictValue.INCONCLUSIVE)

#: (task, initial state) -> (successes, trials) of one side
_Clusters = dict[tuple[int, int], tuple[int, int]]


def _gate(current: SuiteReport, reference: SuiteReport, label: str) -> tuple[VerdictValue, str] | None:
    """Why no test is run (incomplete on either side, evaluations not alike), or None."""
    if not current.complete:
        return VerdictValue.INCOMPLETE, f"{current.runs_completed} of {current.runs_expected} runs completed"
    if not reference.complete:
        return VerdictValue.INCOMPLETE, (
            f"reference {label} has {reference.runs_completed} of {reference.runs_expected} runs completed"
        )
    differences = reference_differences(current, reference)
    if differences:
        return VerdictValue.NOT_COMPARABLE, f"not comparable with {label}: {'; '.join(differences)}"
    return None


def _native_clusters(outcomes: Sequence[PerturbedOutcome], axis: str) -> dict[tuple[int, int, int], PerturbedOutcome]:
    return {(o.task_id, o.init_state, o.level): o for o in outcomes if o.axis.value == axis and o.trials > 0}


def _matched_native(
    cur: Sequence[PerturbedOutcome], ref: Sequence[PerturbedOutcome], axis: str
) -> tuple[_Clusters, _Clusters, int, int]:
    """The axis's cells evaluated alike on both sides, summed per (task, state); and how many cells there were
    on this side, and how many matched."""
    now, before = _native_clusters(cur, axis), _native_clusters(ref, axis)
    a: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    b: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    matched = 0
    for key, o in now.items():
        p = before.get(key)
        if p is None or (p.magnitude, p.unit) != (o.magnitude, o.unit) or (p.seeds and o.seeds and p.seeds != o.seeds):
            continue
        matched += 1
        a[key[:2]][0] += o.successes
        a[key[:2]][1] += o.trials
        b[key[:2]][0] += p.successes
        b[key[:2]][1] += p.trials
    return {k: (v[0], v[1]) for k, v in a.items()}, {k: (v[0], v[1]) for k, v in b.items()}, len(now), matched


def _state_clusters(suite: SuiteReport, tasks: Sequence[int]) -> dict[tuple[int, int], tuple[int, int, list[int]]]:
    wanted = set(tasks)
    return {
        (s.task_id, s.init_state): (s.successes, s.trials, sorted(e.seed for e in s.episodes))
        for s in suite.states
        if s.task_id in wanted
    }


def _matched_published(
    current: SuiteReport, reference: SuiteReport, category: str
) -> tuple[_Clusters, _Clusters, int, int]:
    """A published category's (task, state) clusters evaluated alike on both sides (same seeds when recorded)."""
    mine = next(c for c in (current.robustness.categories if current.robustness else []) if c.category == category)
    theirs = next(
        c for c in (reference.robustness.categories if reference.robustness else []) if c.category == category
    )
    now, before = _state_clusters(current, mine.tasks), _state_clusters(reference, theirs.tasks)
    a, b = {}, {}
    for key, (k, n, seeds) in now.items():
        p = before.get(key)
        if p is None or (seeds and p[2] and seeds != p[2]):
            continue
        a[key], b[key] = (k, n), (p[0], p[1])
    return a, b, len(now), len(a)


def _tested(
    current: SuiteReport,
    axis: str,
    now: _Clusters,
    before: _Clusters,
    cells: tuple[int, int],
    label: str,
    cfg: VerdictConfig,
) -> Verdict:
    common = _common(current, label, cfg)
    total, matched = cells
    if not now:
        reason = f"no {axis} cell was evaluated alike at both checkpoints (levels, magnitudes or seeds differ)"
        return Verdict(value=VerdictValue.NOT_COMPARABLE, reason=reason, **common)
    keys = sorted(now)
    cur = [now[k][0] / now[k][1] for k in keys]
    ref = [before[k][0] / before[k][1] for k in keys]
    out = paired_test(cur, ref, cfg.tolerance_previous)
    rate_now = sum(now[k][0] for k in keys) / sum(now[k][1] for k in keys)
    rate_before = sum(before[k][0] for k in keys) / sum(before[k][1] for k in keys)
    reason = (
        ""
        if matched == total
        else f"paired on {matched} of {total} cells (the others differ in level, magnitude or seeds)"
    )
    return Verdict(
        value=decide(out, cfg.alpha),
        estimate=rate_now,
        reference=rate_before,
        difference=rate_now - rate_before,
        test=f"{out.test} (perturbed episodes under {axis})",
        statistic=out.statistic,
        p_value=out.p_below,
        p_value_above=out.p_above,
        paired=True,
        units=out.units,
        mde=mde_paired(cur, ref, [now[k][1] for k in keys], cfg.tolerance_previous, cfg.alpha),
        reason=reason,
        **common,
    )


def _common(current: SuiteReport, label: str, cfg: VerdictConfig) -> dict[str, object]:
    return {
        "suite": current.suite,
        "against": "previous",
        "kind": "previous",
        "reference_label": label,
        "tolerance": cfg.tolerance_previous,
        "alpha": cfg.alpha,
    }


def axis_verdicts(current: SuiteReport, reference: SuiteReport, *, label: str, cfg: VerdictConfig) -> list[AxisVerdict]:
    """One verdict per axis (and published category) that both checkpoints evaluated; [] without robustness."""
    mine, theirs = current.robustness, reference.robustness
    if mine is None or theirs is None:
        return []
    out: list[AxisVerdict] = []
    gate = _gate(current, reference, label)
    for source in ("native", "published"):
        here = [c.category for c in mine.categories if c.source == source]
        there = {c.category for c in theirs.categories if c.source == source}
        for axis in (a for a in here if a in there):
            if gate is not None:
                verdict = Verdict(value=gate[0], reason=gate[1], **_common(current, label, cfg))
            elif source == "native":
                now, before, total, matched = _matched_native(mine.states, theirs.states, axis)
                verdict = _tested(current, axis, now, before, (total, matched), label, cfg)
            else:
                now, before, total, matched = _matched_published(current, reference, axis)
                verdict = _tested(current, axis, now, before, (total, matched), label, cfg)
            out.append(AxisVerdict(axis=axis, verdict=verdict))
    mark_underpowered([v.verdict for v in out], cfg.power_margin)
    return out


def _previous_verdict(suite: SuiteReport) -> Verdict | None:
    return next((v for v in suite.verdicts if v.kind == "previous" and v.task is None), None)


def robustness_flag(suite: SuiteReport, standard: Sequence[SuiteReport]) -> RobustnessFlag | None:
    """Set when an axis's verdict is ``below`` while the standard SR rose against the same checkpoint.

    The standard SR is the suite's own (its episodes are the perturbed ones' controls) for native axes; for a
    published robustness suite's categories it is that of ``standard`` (the checkpoint's suites without
    published categories), the mean of their differences. "Rose" is any rise of the estimate that a test
    measured (decisive or not): a rise the previous verdict calls significant is marked by ``sr_verdict``.
    """
    section = suite.robustness
    if section is None:
        return None
    below = [v for v in section.verdicts if v.verdict.value == VerdictValue.BELOW]
    if not below:
        return None
    published = {c.category for c in section.categories if c.source == "published"}
    native_below = [v for v in below if v.axis not in published]
    sources = [suite] if native_below else [s for s in standard if s.suite != suite.suite]
    refs = [(s.suite, v) for s in sources if (v := _previous_verdict(s)) is not None and v.value in _TESTED]
    diffs = [v.difference for _, v in refs if v.difference is not None]
    if not refs or len(diffs) != len(refs) or sum(diffs) / len(diffs) <= 0:
        return None
    flagged = native_below or below
    return RobustnessFlag(
        against=below[0].verdict.reference_label,
        axes=[v.axis for v in flagged],
        axis_differences={v.axis: v.verdict.difference or 0.0 for v in flagged},
        sr_suites=[name for name, _ in refs],
        sr_difference=sum(diffs) / len(diffs),
        sr_verdict=refs[0][1].value if len(refs) == 1 else None,
    )


def apply_robustness(
    report: CheckpointReport, previous: Mapping[str, tuple[str, SuiteReport]], cfg: VerdictConfig
) -> None:
    """Fill each suite's axis verdicts, flag and failure-reason moves against its previous checkpoint
    (``previous``: suite -> (label, that checkpoint's suite report)), in place. Call after the SR verdicts: the
    flag reads them."""
    for suite in report.suites:
        found = previous.get(suite.suite)
        if found is None:
            continue
        label, before = found
        if suite.robustness is not None:
            suite.robustness.verdicts = axis_verdicts(suite, before, label=label, cfg=cfg)
        if suite.failure_reasons is not None:
            gate = _gate(suite, before, label)
            if gate is None:
                suite.failure_reasons = reason_moves(suite, before, label=label, alpha=cfg.alpha)
            else:
                suite.failure_reasons = suite.failure_reasons.model_copy(
                    update={"note": f"no moves counted: {gate[1]}"}
                )
    standard = [
        s
        for s in report.suites
        if s.robustness is None or not any(c.source == "published" for c in s.robustness.categories)
    ]
    for suite in report.suites:
        if suite.robustness is not None:
            suite.robustness.flag = robustness_flag(suite, standard)
