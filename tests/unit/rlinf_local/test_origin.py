"""A verdict that decided nothing names the lever of the command the user ran: ``DEMO_ARGS=--paper`` after
``make demo``, ``--config`` after a pipeline on the small budget, never a flag they did not pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlinf_bench.baselines import get_baselines
from rlinf_bench.contracts import CheckpointReport, EvalRequest, RequestOrigin, VerdictValue
from rlinf_bench.intake.config import parse_config_text
from rlinf_bench.reporting.messages import summary_notification
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from rlinf_local.demo_command import demo_matrix_yaml
from rlinf_local.runs import config_text_for
from tests.unit.stats.runfactory import CKPT, checkpoint, heterogeneous_runs


def origin_of(text: str) -> RequestOrigin:
    return parse_config_text(text, source="test").origin


def short_horizon_report(origin: RequestOrigin) -> CheckpointReport:
    """Every task of LIBERO-Spatial at 130 steps under the rlinf protocol (whose own horizon is 512)."""
    runs = heterogeneous_runs(np.random.default_rng(1), np.full((10, 10), 0.9), ckpt=checkpoint(200, "demo"))
    runs = [
        r.model_copy(update={"protocol": r.protocol.model_copy(update={"max_steps": 130, "overrides": ["max_steps"]})})
        for r in runs
    ]
    report = aggregate_checkpoint([SourcedRun(str(r.run_index), r) for r in runs])
    report.origin = origin
    return apply_verdicts(report, get_baselines(["libero/openvla-oft-rlinf"]))


def test_after_make_demo_the_fix_is_demo_args_paper_not_a_flag_never_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAKELEVEL", "1")  # what make exports to `rlinf-bench demo` in `make demo`'s recipe
    origin = origin_of(demo_matrix_yaml(tmp_path))
    (v,) = short_horizon_report(origin).verdicts
    text = summary_notification(short_horizon_report(origin)).text

    assert origin.command == "make demo"
    assert v.value == VerdictValue.NOT_COMPARABLE and "max steps 130 vs 512" in v.reason
    assert "for a verdict, run make demo DEMO_ARGS=--paper" in v.reason and "--max-steps" not in v.reason
    assert "make demo DEMO_ARGS=--paper" in text and "--max-steps" not in text and "[cut" not in text


def test_rlinf_bench_demo_names_its_own_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAKELEVEL", raising=False)

    origin = origin_of(demo_matrix_yaml(tmp_path))
    assert origin.command == "rlinf-bench demo"
    assert origin.levers["max_steps"] == "run rlinf-bench demo --paper"
    assert origin_of(demo_matrix_yaml(tmp_path, paper=True)).levers == {}  # nothing to lift
    assert origin_of(demo_matrix_yaml(tmp_path, budget={"max_steps": 50})).levers == {
        "max_steps": "run rlinf-bench demo --paper without --max-steps"  # leaving it out alone keeps the demo's 130
    }
    paper_flag = origin_of(demo_matrix_yaml(tmp_path, paper=True, budget={"max_steps": 50}))
    assert (paper_flag.command, paper_flag.levers) == (
        "rlinf-bench demo --paper",
        {"max_steps": "leave out --max-steps"},
    )


def test_pipeline_names_the_config_or_the_flag_that_set_the_horizon(tmp_path: Path) -> None:
    config = tmp_path / "intake.yaml"
    config.write_text("suites: [{name: libero_spatial, max_steps: 100}]\n")

    small = origin_of(config_text_for(None, tmp_path))
    assert small.command == "rlinf-bench pipeline"
    assert (
        small.levers["max_steps"]
        == "pass --config FILE without max_steps (the small budget stops episodes at 20 steps)"
    )
    assert origin_of(config_text_for(config, tmp_path)).levers == {
        "max_steps": f"remove max_steps from the suites in {config}"
    }
    flagged = origin_of(config_text_for(config, tmp_path, {"max_steps": 40}, command="rlinf-bench watch"))
    assert (flagged.command, flagged.levers) == ("rlinf-bench watch", {"max_steps": "leave out --max-steps"})


def test_a_config_that_names_its_own_origin_keeps_it(tmp_path: Path) -> None:
    config = tmp_path / "intake.yaml"
    config.write_text("origin: {command: nightly cron, levers: {max_steps: edit nightly.yaml}}\n")

    assert origin_of(config_text_for(config, tmp_path)).command == "nightly cron"


def test_the_origin_is_not_part_of_what_is_measured() -> None:
    plain = EvalRequest(checkpoint=CKPT)
    started = plain.model_copy(update={"origin": RequestOrigin(command="make demo", levers={"max_steps": "x"})})

    assert started.digest() == plain.digest()  # same matrix, same execution names and result folders


def test_the_whole_lever_reaches_the_message_line_uncut(tmp_path: Path) -> None:
    """The longest lever (a pipeline with --max-steps on the small budget) still ends the verdict's line whole."""
    origin = origin_of(config_text_for(None, tmp_path, {"max_steps": 130}))
    text = summary_notification(short_horizon_report(origin)).text

    assert origin.levers["max_steps"] in text and "…" not in text and "[cut" not in text
