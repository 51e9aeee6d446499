"""``rlinf-bench baselines``: every baseline a user can compare with, with its source, protocol and numbers; the
best published results for context, each with the protocol and decoding it was measured under; and the
protocols that must not be mixed."""

from __future__ import annotations

import json

import pytest

from rlinf_bench.baselines import all_baselines, best_published
from rlinf_cli.main import main

# Copied by hand from the sources (REFERENCE.md sections 2 and 9), independently of the YAML files.
BEST = {"sota/libero-4suite-average": ("LaST-R1", {"average": 99.8}), "sota/libero-90": ("RLinf", {"libero_90": 98.6})}


def listing(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["baselines", *args]) == 0
    return capsys.readouterr().out


def test_given_the_catalogue_then_every_baseline_is_listed_with_numbers_protocol_and_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = listing(capsys)

    for b in all_baselines():
        block = text.split(f"  {b.name}  ", 1)[1].split("\n\n", 1)[0]
        assert b.source in block and "protocol:" in block, b.name
        assert all(f"{suite} {value:g}" in block for suite, value in b.values.items()), b.name
    assert "libero130/rlinf-grpo" in text and "libero_90 98.59" in text  # RLinf's LIBERO-130 numbers


def test_given_the_best_published_results_then_each_has_protocol_decoding_source_and_date(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = json.loads(listing(capsys, "--json"))

    best = {b["name"]: b for b in doc["best_published"]}
    for name, (model, values) in BEST.items():
        assert model in best[name]["model"] and best[name]["values"] == values
        assert best[name]["protocol"] and best[name]["decoding"] and best[name]["date"] == "2026-07-14"
    assert {b["name"] for b in doc["baselines"]} == {b.name for b in all_baselines()}
    assert len(doc["best_published"]) == len(best_published())


def test_given_robotwin_then_the_protocols_that_must_not_be_mixed_are_stated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = listing(capsys, "--benchmark", "robotwin")

    notes = text.split("robotwin: protocols that must not be mixed", 1)[1]
    assert "Protocol A" in notes and "Protocol B" in notes and "100 episodes per task" in notes
    assert "libero/" not in text


def test_given_the_briefs_suite_name_then_only_baselines_with_a_number_for_it_are_listed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    doc = json.loads(listing(capsys, "--suite", "LIBERO-Long", "--json"))

    names = {b["name"] for b in doc["baselines"]}
    assert names == {b.name for b in all_baselines() if "libero_10" in b.values} and names
