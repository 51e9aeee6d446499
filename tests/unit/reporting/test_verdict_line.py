"""A verdict line in the email and Slack summary quotes the p of the test that decided it."""

from __future__ import annotations

from rlinf_bench.contracts.report import Verdict, VerdictValue
from rlinf_bench.reporting.summary_lines import verdict_line


def _verdict(value: VerdictValue) -> Verdict:
    return Verdict(
        suite="libero_spatial",
        against="previous",
        kind="previous",
        reference_label="global_step 100",
        value=value,
        reference=0.25,
        estimate=0.9,
        difference=0.65,
        tolerance=0.02,
        alpha=0.05,
        p_value=0.99999,
        p_value_above=0.00001,
        mde=0.391,
    )


def test_an_above_verdict_quotes_the_gain_tests_p_not_the_drop_tests() -> None:
    line = verdict_line(_verdict(VerdictValue.ABOVE))

    assert "+65.0 pts, p = " in line
    assert "p = 1.0000" not in line


def test_a_below_verdict_quotes_the_drop_tests_p() -> None:
    line = verdict_line(_verdict(VerdictValue.BELOW))

    assert "p = 1.0000" in line
