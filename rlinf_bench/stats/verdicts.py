"""Verdicts: a suite's success rate against published baselines, the previous checkpoint and the best so far.

Rule for every comparison (alpha defaults to 0.05):
- below  when the one-sided test "rate < reference - tolerance" rejects;
- above  when the one-sided test "rate > reference" rejects;
- within otherwise, when the test could see a drop of tolerance + 5 points (``power_margin``);
- inconclusive when it could not ("underpowered: sees drops ≥ X pts", :mod:`rlinf_bench.stats.power_words`);
- incomplete whenever a run of this suite (or of the reference) is missing or failed;
- not_comparable when a baseline was measured with other episode settings than the runs (max steps,
  settle steps, settle gripper): such numbers are never set against each other, whatever they say; a
  baseline that only decodes otherwise (greedy vs sampled) gets its verdict, with the difference in
  ``caveat`` ("decoding differs: greedy vs sampled T=1.6");
  and when the previous or best checkpoint ran another suite, task set, trials per task or protocol
  (:mod:`rlinf_bench.stats.reference_match` names the difference). "Best" is chosen among comparable
  checkpoints only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rlinf_bench.baselines import Baseline
from rlinf_bench.contracts import CheckpointReport, StateOutcome, SuiteReport, Verdict, VerdictValue
from rlinf_bench.protocols import RunProtocol, decoding_difference, episode_differences
from rlinf_bench.stats.decision import VerdictConfig
from rlinf_bench.stats.decision import decide as _decide
from rlinf_bench.stats.flips import flipped_states
from rlinf_bench.stats.intervals import clustered_interval
from rlinf_bench.stats.power import mde_constant, mde_paired, mde_two_proportion
from rlinf_bench.stats.power_words import mark_underpowered
from rlinf_bench.stats.provenance_diff import changes_line, environment_changes
from rlinf_bench.stats.reference_match import reference_caveat, reference_differences
from rlinf_bench.stats.robustness_verdicts import apply_robustness
from rlinf_bench.stats.significance import (
    compare_to_constant,
    paired_test,
    two_proportion_test,
)
from rlinf_bench.suites import SUITES


def _incomplete(suite: SuiteReport, **fields: object) -> Verdict:
    if suite.complete and not suite.states:
        reason = "no per-state outcomes in this report (written before they were recorded): aggregate the runs again"
        return Verdict(suite=suite.suite, value=VerdictValue.INCOMPLETE, reason=reason, **fields)
    missing = suite.runs_expected - suite.runs_completed
    bad = [f"run {r.run_index} {r.status.value}" for r in suite.runs if r.status.value != "complete"]
    reason = f"{suite.runs_completed} of {suite.runs_expected} runs completed" + (
        f" ({', '.join(bad)})" if bad else f" ({missing} missing)"
    )
    return Verdict(suite=suite.suite, value=VerdictValue.INCOMPLETE, reason=reason, **fields)


def _partial_suite(suite: SuiteReport) -> str | None:
    """'k of n tasks evaluated' when a known suite was evaluated on a subset of its tasks, else None."""
    spec = SUITES.find(suite.suite)
    if spec is None or len(suite.tasks) >= spec.n_tasks:
        return None
    return f"only {len(suite.tasks)} of {spec.n_tasks} tasks evaluated"


def _run_protocol(suite: SuiteReport) -> RunProtocol:
    # Reports written before protocols were recorded ran OpenVLA-OFT's defaults.
    return suite.protocol or RunProtocol(max_steps=_suite_max_steps(suite), settle_steps=10)


#: the command-line flag behind each override a RunProtocol records
OVERRIDE_FLAGS = {
    "max_steps": "--max-steps",
    "settle_steps": "--settle-steps",
    "settle_gripper": "--settle-gripper",
    "render_resolution": "--resolution",
}


def comparability(suite: SuiteReport, baseline: Baseline, levers: Mapping[str, str] | None = None) -> str | None:
    """Why ``suite``'s runs cannot be compared with ``baseline`` (None: they can, or nothing is known).

    Only settings that change what an episode is count here; decoding is :func:`caveat`'s. ``levers``
    (the request's :class:`~rlinf_bench.contracts.RequestOrigin`) say how the user who started the run
    changes each overridden setting; without one, the flag that sets it is named.
    """
    if baseline.protocol is None:
        return None
    run = _run_protocol(suite)
    diffs = episode_differences(run, baseline.protocol, suite.suite)
    if not diffs:
        return None
    if run.name == baseline.protocol.name and run.overrides:
        # The run already uses the baseline's protocol; its own overrides are what make the difference.
        own = [(levers or {}).get(o) for o in run.overrides]
        if all(own):  # the user's own levers, short enough to survive a message line
            fix = f"for a verdict, {' and '.join(dict.fromkeys(x for x in own if x))}"
        else:
            flags = ", ".join(OVERRIDE_FLAGS.get(o, o) for o in run.overrides)
            fix = f"for a verdict, leave out {flags} (the {run.name} protocol's own settings)"
    else:
        fix = f"run with --protocol {baseline.protocol.name} for a verdict"
    return (
        f"measured under another protocol: {'; '.join(diffs)} (run vs {baseline.name}, {baseline.protocol.name} "
        f"protocol); {fix}"
    )


def caveat(suite: SuiteReport, baseline: Baseline) -> str:
    """What the verdict against ``baseline`` must be read with: a decoding difference ('' when none)."""
    if baseline.protocol is None:
        return ""
    return decoding_difference(_run_protocol(suite), baseline.protocol) or ""


def _suite_max_steps(suite: SuiteReport) -> int:
    spec = SUITES.find(suite.suite)
    return spec.max_steps if spec is not None else 1


def _not_comparable(
    suite: str, name: str, ref: float, reason: str, estimate: float | None, **fields: object
) -> Verdict:
    return Verdict(
        suite=suite,
        against=name,
        kind="baseline",
        value=VerdictValue.NOT_COMPARABLE,
        reference=ref,
        estimate=estimate,
        reason=reason,
        **fields,
    )


def _against_constant(
    suite: SuiteReport, name: str, ref: float, cfg: VerdictConfig, task: str | None, task_id: int | None
) -> Verdict:
    common: dict[str, object] = {
        "against": name,
        "kind": "baseline",
        "reference": ref,
        "tolerance": cfg.tolerance,
        "alpha": cfg.alpha,
        "task": task,
    }
    if not suite.complete or not suite.states:
        return _incomplete(suite, **common)
    partial = _partial_suite(suite) if task_id is None else None
    if partial:
        # A suite's published rate averages all its tasks, and tasks differ far more in difficulty
        # than runs do: a subset's rate is a different quantity, so no test is run on it.
        return Verdict(
            suite=suite.suite,
            value=VerdictValue.INCOMPLETE,
            estimate=suite.success_rate_mean,
            difference=None if suite.success_rate_mean is None else suite.success_rate_mean - ref,
            reason=f"{partial}; {name} is the rate over the whole suite: evaluate every task for a verdict",
            **common,
        )
    states = [s for s in suite.states if task_id is None or s.task_id == task_id]
    est = clustered_interval([s.successes for s in states], [s.trials for s in states])
    out = compare_to_constant(est.rate, est.effective_n, est.df, ref, cfg.tolerance, clusters=est.clusters)
    return Verdict(
        suite=suite.suite,
        value=_decide(out, cfg.alpha),
        estimate=est.rate,
        difference=est.rate - ref,
        test=out.test,
        statistic=out.statistic,
        p_value=out.p_below,
        p_value_above=out.p_above,
        units=out.units,
        mde=mde_constant(ref, cfg.tolerance, est.effective_n, est.df, cfg.alpha),
        **common,
    )


def baseline_verdicts(
    suite: SuiteReport, baselines: Sequence[Baseline], cfg: VerdictConfig, levers: Mapping[str, str] | None = None
) -> list[Verdict]:
    """One verdict per baseline that publishes a number for this suite (or, for per-task tables, per task);
    ``levers``: :func:`comparability`'s."""
    out: list[Verdict] = []
    for b in baselines:
        reason = comparability(suite, b, levers)
        if b.level == "suite":
            ref = b.rate(suite.suite)
            if ref is not None and reason is not None:
                common: dict[str, object] = {"tolerance": cfg.tolerance, "alpha": cfg.alpha}
                out.append(_not_comparable(suite.suite, b.name, ref, reason, suite.success_rate_mean, **common))
            elif ref is not None:
                out.append(_with_caveat(_against_constant(suite, b.name, ref, cfg, None, None), suite, b))
            continue
        for t in suite.tasks:
            ref = b.rate(t.task_name)
            if ref is not None and reason is not None:
                per_task: dict[str, object] = {"tolerance": cfg.tolerance, "alpha": cfg.alpha, "task": t.task_name}
                out.append(_not_comparable(suite.suite, b.name, ref, reason, t.success_rate_mean, **per_task))
            elif ref is not None:
                out.append(_with_caveat(_against_constant(suite, b.name, ref, cfg, t.task_name, t.task_id), suite, b))
    return out


def _with_caveat(v: Verdict, suite: SuiteReport, baseline: Baseline) -> Verdict:
    v.caveat = caveat(suite, baseline)
    return v


def average_verdicts(report: CheckpointReport, baselines: Sequence[Baseline], cfg: VerdictConfig) -> list[Verdict]:
    """The unweighted mean of the suites' SRs vs a baseline's published average (the papers' "Avg"
    column), when the report covers every suite the baseline averages over.

    Suites are independent sets of clusters, so the effective sample size of the mean is
    K^2 / sum(1 / n_eff_s) (K suites); with one suite this is exactly the per-suite test.
    """
    out: list[Verdict] = []
    for b in baselines:
        if b.level != "suite" or b.average is None:
            continue
        found = [report.suite(name) for name in b.values]
        suites = [s for s in found if s is not None]
        if len(suites) != len(found):
            continue
        levers = report.origin.levers
        reasons = [f"{s.suite}: {r}" for s in suites if (r := comparability(s, b, levers)) is not None]
        if reasons:
            common_nc = {"tolerance": cfg.tolerance, "alpha": cfg.alpha}
            out.append(_not_comparable("average", b.name, b.average / 100.0, "; ".join(reasons), None, **common_nc))
            continue
        common: dict[str, object] = {
            "suite": "average",
            "against": b.name,
            "kind": "baseline",
            "reference": b.average / 100.0,
            "tolerance": cfg.tolerance,
            "alpha": cfg.alpha,
            "caveat": "; ".join(sorted({c for s in suites if (c := caveat(s, b))})),
        }
        bad = [s.suite for s in suites if not s.complete or not s.states]
        if bad:
            reason = f"incomplete suites: {', '.join(bad)}"
            out.append(Verdict(value=VerdictValue.INCOMPLETE, reason=reason, **common))
            continue
        ests = [clustered_interval([x.successes for x in s.states], [x.trials for x in s.states]) for s in suites]
        k = len(ests)
        rate = sum(e.rate for e in ests) / k
        n_eff = k * k / sum(1.0 / e.effective_n for e in ests)
        df = sum(e.df for e in ests if e.df is not None) if all(e.df is not None for e in ests) else None
        res = compare_to_constant(
            rate, n_eff, df, b.average / 100.0, cfg.tolerance, clusters=sum(e.clusters for e in ests)
        )
        out.append(
            Verdict(
                value=_decide(res, cfg.alpha),
                mde=mde_constant(b.average / 100.0, cfg.tolerance, n_eff, df, cfg.alpha),
                estimate=rate,
                difference=rate - b.average / 100.0,
                test=f"{res.test}, mean of {k} suites",
                statistic=res.statistic,
                p_value=res.p_below,
                p_value_above=res.p_above,
                units=res.units,
                **common,
            )
        )
    return out


def reference_verdict(
    current: SuiteReport, reference: SuiteReport, *, kind: str, label: str, cfg: VerdictConfig
) -> Verdict:
    """Current vs an earlier checkpoint: paired over initial states when both used the same ones."""
    common: dict[str, object] = {
        "against": kind,
        "kind": kind,
        "reference": reference.success_rate_mean,
        "reference_label": label,
        "tolerance": cfg.tolerance_previous,
        "alpha": cfg.alpha,
    }
    if not current.complete or not current.states:
        return _incomplete(current, **common)
    if not reference.complete or not reference.states:
        return Verdict(
            suite=current.suite,
            value=VerdictValue.INCOMPLETE,
            reason=f"reference {label} has {reference.runs_completed} of {reference.runs_expected} runs completed",
            **common,
        )
    differences = reference_differences(current, reference)
    if differences:
        # Different task mixes or episode settings measure different quantities: no test is run on them.
        return Verdict(
            suite=current.suite,
            value=VerdictValue.NOT_COMPARABLE,
            estimate=current.success_rate_mean,
            reason=f"not comparable with {label}: {'; '.join(differences)}; evaluate both alike for a verdict",
            **{**common, "reference": reference.success_rate_mean},
        )
    cur = {(s.task_id, s.init_state): s for s in current.states}
    ref = {(s.task_id, s.init_state): s for s in reference.states}
    k1, n1 = current.successes, current.episodes
    k2, n2 = reference.successes, reference.episodes
    refusal = pairing_refusal(cur, ref)
    reason = ""
    if refusal is None:
        keys = sorted(cur)
        now, before = [cur[k].successes / cur[k].trials for k in keys], [ref[k].successes / ref[k].trials for k in keys]
        out = paired_test(now, before, cfg.tolerance_previous)
        mde = mde_paired(now, before, [cur[k].trials for k in keys], cfg.tolerance_previous, cfg.alpha)
    else:
        d1, d2 = current.design_effect or 1.0, reference.design_effect or 1.0
        out = two_proportion_test(k1, n1, d1, k2, n2, d2, cfg.tolerance_previous)
        mde = mde_two_proportion(k1 / n1, n1, d1, k2 / n2, n2, d2, cfg.tolerance_previous, cfg.alpha)
        reason = f"paired comparison refused: {refusal}; unpaired test instead"
    est, ref_rate = k1 / n1, k2 / n2
    value = _decide(out, cfg.alpha)
    changes = environment_changes(current, reference)
    if changes and value == VerdictValue.BELOW:
        # The first thing a reader of a regression must know: the weights were not the only change.
        reason = f"environment changed: {changes_line(changes)}" + (f"; {reason}" if reason else "")
    return Verdict(
        suite=current.suite,
        value=value,
        estimate=est,
        difference=est - ref_rate,
        test=out.test if refusal is None else f"{out.test}, unpaired fallback",
        statistic=out.statistic,
        p_value=out.p_below,
        p_value_above=out.p_above,
        paired=refusal is None,
        units=out.units,
        mde=mde,
        environment_changes=changes,
        reason=reason,
        caveat=reference_caveat(current, reference),
        **{**common, "reference": ref_rate},
    )


def pairing_refusal(cur: dict[tuple[int, int], StateOutcome], ref: dict[tuple[int, int], StateOutcome]) -> str | None:
    """Why the two checkpoints' states cannot be paired (None: they can).

    Pairing needs the same initial states, each replayed with the same seeds: otherwise a state's
    difference mixes the policy's change with the environment's randomness (huggingface/lerobot#4152).
    Seeds are compared when both reports recorded per-episode rows.
    """
    if cur.keys() != ref.keys():
        only_now, only_before = len(cur.keys() - ref.keys()), len(ref.keys() - cur.keys())
        return (
            f"the checkpoints were evaluated on different initial states ({only_now} only at this checkpoint, "
            f"{only_before} only at the reference)"
        )
    differ = [
        k
        for k in sorted(cur)
        if cur[k].episodes
        and ref[k].episodes
        and sorted(e.seed for e in cur[k].episodes) != sorted(e.seed for e in ref[k].episodes)
    ]
    if differ:
        task, state = differ[0]
        return f"{len(differ)} initial state(s) were replayed with different seeds (first: task {task}, state {state})"
    return None


def _label(report: CheckpointReport) -> str:
    return f"global_step {report.global_step}" if report.global_step is not None else report.checkpoint_uri


def pick_previous_and_best(
    current: CheckpointReport, history: Sequence[CheckpointReport], suite: str
) -> tuple[tuple[str, SuiteReport] | None, tuple[str, SuiteReport] | None]:
    """The latest earlier complete evaluation of ``suite`` and the best one so far (highest mean SR).

    Best is chosen among the evaluations comparable with this checkpoint's (same tasks, trials per task
    and protocol): a higher rate on an easier task set is not a better checkpoint. Previous is the latest
    whatever it ran; its verdict says when it is not comparable.
    """
    step = current.global_step
    mine = current.suite(suite)
    candidates: list[tuple[int, CheckpointReport, SuiteReport]] = []
    for h in history:
        s = h.suite(suite)
        if s is None or not s.complete or s.success_rate_mean is None or h.checkpoint_uri == current.checkpoint_uri:
            continue
        h_step = h.global_step if h.global_step is not None else -1
        if step is not None and h_step >= step:
            continue
        candidates.append((h_step, h, s))
    if not candidates:
        return None, None
    prev = max(candidates, key=lambda c: c[0])
    alike = [c for c in candidates if mine is None or not reference_differences(mine, c[2])]
    if not alike:
        return (_label(prev[1]), prev[2]), None
    best = max(alike, key=lambda c: (c[2].success_rate_mean or 0.0, c[0]))
    return (_label(prev[1]), prev[2]), (_label(best[1]), best[2])


def apply_verdicts(
    report: CheckpointReport,
    baselines: Sequence[Baseline],
    history: Sequence[CheckpointReport] = (),
    cfg: VerdictConfig | None = None,
    *,
    previous_report: CheckpointReport | None = None,
) -> CheckpointReport:
    """Fill every suite's verdicts: baselines first, then previous and best (best only when it differs); then
    the robustness verdicts per axis, the headline flag and the failure reasons' moves against previous.

    ``history`` holds earlier checkpoints of the same experiment (previous = latest earlier step, best =
    highest SR). ``previous_report`` names the previous checkpoint explicitly instead (no best).
    """
    cfg = cfg or VerdictConfig()
    report.baselines = [b.name for b in baselines]
    previous_of: dict[str, tuple[str, SuiteReport]] = {}
    for suite in report.suites:
        verdicts = baseline_verdicts(suite, baselines, cfg, report.origin.levers)
        if previous_report is not None:
            ref = previous_report.suite(suite.suite)
            previous = (_label(previous_report), ref) if ref is not None else None
            best = None
        else:
            previous, best = pick_previous_and_best(report, history, suite.suite)
        if previous is not None:
            previous_of[suite.suite] = previous
            verdicts.append(reference_verdict(suite, previous[1], kind="previous", label=previous[0], cfg=cfg))
            alike = not reference_differences(suite, previous[1])
            suite.flips = flipped_states(suite, previous[1]) if suite.complete and previous[1].complete else []
            suite.flips = suite.flips if alike else []
            suite.flips_against = previous[0] if suite.flips else ""
        if best is not None and previous is not None and best[0] != previous[0]:
            verdicts.append(reference_verdict(suite, best[1], kind="best", label=best[0], cfg=cfg))
        if suite.episode_errors:
            note = (
                f"{suite.episode_errors} episode(s) ended by simulator errors and count as failures "
                "(--on-episode-error fail-episode)"
            )
            for v in verdicts:
                v.reason = f"{v.reason}; {note}" if v.reason else note
        mark_underpowered(verdicts, cfg.power_margin)
        suite.verdicts = verdicts
    report.average_verdicts = average_verdicts(report, baselines, cfg)
    mark_underpowered(report.average_verdicts, cfg.power_margin)
    apply_robustness(report, previous_of, cfg)  # per axis, the flag and failure reasons: docs/robustness.md
    return report
