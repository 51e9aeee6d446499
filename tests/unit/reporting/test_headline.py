"""The headline (email subject, Slack header, terminal summary) names decisive verdicts only, or says why none."""

from __future__ import annotations

from rlinf_bench.baselines import Baseline, get_baseline
from rlinf_bench.contracts import CheckpointReport, VerdictValue
from rlinf_bench.reporting.format import headline, verdict_word
from rlinf_bench.reporting.notify import email_subject, slack_payload
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.runfactory import checkpoint, make_run

PAPER = get_baseline("libero/openvla-oft-rlinf")


def _report(step: int, outcomes: dict[int, list[int]], *, runs: int = 1, protocol: str = "rlinf") -> CheckpointReport:
    made = [make_run(outcomes, run_index=i, ckpt=checkpoint(step), protocol=protocol) for i in range(runs)]
    return aggregate_checkpoint([SourcedRun(f"{step}-{r.run_index}", r) for r in made], runs_expected=runs)


def test_given_the_only_reference_not_comparable_then_the_headline_says_no_decisive_verdict_and_why() -> None:
    # The demo's step 200 before: "SR 0.0% (within references)" with only a not-comparable paper number.
    report = apply_verdicts(_report(200, {t: [0] for t in range(10)}, protocol="oft"), [PAPER])
    assert [v.value for v in report.verdicts] == [VerdictValue.NOT_COMPARABLE]
    line = headline(report)
    assert line.endswith("SR 0.0% — no decisive verdict: the only reference was not comparable")
    assert "within" not in line
    assert "no decisive verdict" in email_subject(report)
    assert "no decisive verdict" in slack_payload(report)["text"]


def test_given_one_episode_per_task_then_within_vs_previous_is_never_claimed() -> None:
    before = _report(100, {t: [1] for t in range(10)})
    report = apply_verdicts(_report(200, {t: [1] for t in range(10)}), [], [before])
    (v,) = report.verdicts
    assert v.value == VerdictValue.INCONCLUSIVE
    assert verdict_word(v).startswith("◇ inconclusive (underpowered: sees drops ≥ ")
    assert "within" not in headline(report)
    assert headline(report).endswith("no decisive verdict: the only reference was inconclusive")


def test_given_decisive_and_undecided_verdicts_then_only_the_decisive_ones_are_named() -> None:
    good = {t: [1] * 50 for t in range(10)}
    bad = {t: [1] * 25 + [0] * 25 for t in range(10)}
    before = _report(100, good, runs=3)
    other = Baseline(
        name="t/oft-only",
        model="m",
        benchmark="b",
        level="suite",
        values={"libero_spatial": 90.0},
        source="t",
        protocol=PAPER.protocol.model_copy(update={"settle_steps": 10}) if PAPER.protocol else None,
    )
    report = apply_verdicts(_report(200, bad, runs=3), [PAPER, other], [before])
    values = {v.against: v.value for v in report.verdicts}
    assert values["previous"] == VerdictValue.BELOW and values["t/oft-only"] == VerdictValue.NOT_COMPARABLE
    line = headline(report)
    assert "— BELOW libero/openvla-oft-rlinf, previous" in line
    assert "t/oft-only" not in line and "not comparable" not in line


def test_given_no_reference_at_all_then_the_headline_says_so() -> None:
    report = apply_verdicts(_report(100, {0: [1]}), [])
    assert headline(report).endswith(
        "no decisive verdict: no reference (no baseline selected and no earlier checkpoint)"
    )


def test_an_inconclusive_paper_verdict_does_not_pass_the_checklist() -> None:
    from rlinf_bench.reporting.checklist import validation_checklist

    report = apply_verdicts(_report(100, {t: [1] for t in range(10)}), [PAPER])
    assert [v.value for v in report.verdicts] == [VerdictValue.INCONCLUSIVE]
    items = {i.item: i for i in validation_checklist([report])}
    sr = items["Success rates are in expected range (compare to paper)"]
    assert sr.status == "not decided" and "inconclusive" in sr.why  # it ran: never "not run"
