"""``demo`` and ``demo --paper``: what each evaluates, and whether the verdict against the paper can be decided."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.baselines.published import get_baseline
from rlinf_bench.contracts.protocol_profiles import RunProtocol
from rlinf_bench.intake.config import parse_config_text
from rlinf_bench.protocols import episode_differences, get_profile
from rlinf_local.demo_command import demo_matrix_yaml

PAPER = "libero/openvla-oft-rlinf"


def _episode_differences_with_the_paper(text: str) -> tuple[list[int] | None, list[str]]:
    config = parse_config_text(text, source="demo")
    suite = config.suites[0]
    profile = get_profile(config.protocol)
    run = RunProtocol(
        name=profile.name,
        max_steps=suite.max_steps or profile.max_steps_for(suite.name),
        settle_steps=profile.settle_steps,
        settle_gripper=profile.settle_gripper,
    )
    baseline = get_baseline(PAPER)
    assert baseline.protocol is not None and PAPER in config.baselines
    return suite.tasks, episode_differences(run, baseline.protocol, suite.name)


def test_the_short_demo_cannot_decide_the_paper_verdict_and_says_why(tmp_path: Path) -> None:
    tasks, diffs = _episode_differences_with_the_paper(demo_matrix_yaml(tmp_path))

    assert tasks == [0, 2, 5, 7] and diffs == ["max steps 130 vs 512"]


def test_demo_paper_runs_every_task_with_the_papers_episode_settings(tmp_path: Path) -> None:
    tasks, diffs = _episode_differences_with_the_paper(demo_matrix_yaml(tmp_path, paper=True))

    assert tasks == list(range(10)) and diffs == []
    config = parse_config_text(demo_matrix_yaml(tmp_path, paper=True), source="demo")
    assert (config.runs, config.trials_per_task) == (1, 2)


def test_budget_flags_lay_over_demo_paper(tmp_path: Path) -> None:
    config = parse_config_text(demo_matrix_yaml(tmp_path, paper=True, budget={"trials": 5}), source="demo")

    assert (config.trials_per_task, config.suites[0].max_steps, len(config.suites[0].tasks or [])) == (5, None, 10)


def test_demo_robustness_reaches_the_matrix_and_costs_one_perturbed_episode_per_task(tmp_path: Path) -> None:
    from rlinf_bench.robustness import perturbed_episodes

    plain = parse_config_text(demo_matrix_yaml(tmp_path), source="demo")
    config = parse_config_text(demo_matrix_yaml(tmp_path, robustness="quick"), source="demo")

    assert plain.robustness is None and config.robustness is not None
    assert config.robustness.profile == "quick"
    assert perturbed_episodes(config.robustness, len(config.suites[0].tasks or []), 3) == 4


def test_demo_robustness_typo_stops_before_the_stack_naming_the_axes(capsys: object) -> None:
    import pytest

    from rlinf_cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(["demo", "--robustness", "cmaera:2", "--out", "unused"])
    assert stop.value.code == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "'cmaera' is no axis or profile" in err and "camera" in err
