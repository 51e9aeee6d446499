"""Help and names: every command says what it does, each option's default is printed once, ``evaluate --policy``
lists every policy kind the registries hold, ``report`` has one name for the experiment, and the brief's suite
spellings are accepted by ``evaluate --suite``."""

from __future__ import annotations

import argparse
import re

import pytest

from eval_runner.policies.builtin import BUILTINS
from eval_runner.policies.factory import SCHEMES
from rlinf_cli.main import build_parser, main


def _every_parser(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _every_parser(child, (*path, name))
    return found


PARSERS = _every_parser(build_parser())


@pytest.mark.parametrize(("path", "parser"), PARSERS[1:], ids=[" ".join(p) for p, _ in PARSERS[1:]])
def test_given_any_command_then_its_help_describes_it(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
    assert parser.description and len(parser.description.split()) >= 8, f"rlinf-bench {' '.join(path)} --help"


@pytest.mark.parametrize(("path", "parser"), PARSERS, ids=[" ".join(p) or "rlinf-bench" for p, _ in PARSERS])
def test_given_any_option_then_its_default_is_printed_once(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.help in (None, argparse.SUPPRESS):
            continue
        shown = formatter._expand_help(action)  # the help as printed, with any (default: X) added
        assert len(re.findall(r"\bdefault\b", shown)) <= 1, (path, action.option_strings, shown)


def test_given_evaluate_help_then_the_policy_option_lists_every_registered_kind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    kinds = [f"builtin:{name}" for name in BUILTINS.names()] + [f"{s}:" for s in SCHEMES.names() if s != "builtin"]
    assert len(kinds) >= 9  # zero, random, demo, expert, hold; server, openpi, python, rlinf
    missing = [k for k in kinds if k not in text]
    assert not missing, text


def test_given_report_help_then_the_experiment_has_one_name_and_the_old_one_still_works(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["report", "--help"])
    text = capsys.readouterr().out
    assert "--experiment" in text and "--mlflow-experiment" not in text
    args = build_parser().parse_args(["report", "--mlflow-experiment", "Other"])
    assert args.experiment_alias == "Other"


def test_given_two_experiment_names_then_report_refuses_naming_both(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["report", "--experiment", "A", "--mlflow-experiment", "B", "--tracking-uri", "sqlite:///x.db"])
    assert rc == 2 and "--experiment A and --mlflow-experiment B" in capsys.readouterr().err


def test_given_the_briefs_long_suite_then_evaluate_lists_libero_10(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("libero")  # the task list is read from the installed LIBERO package
    assert main(["evaluate", "--suite", "libero_long", "--list-tasks"]) == 0
    assert capsys.readouterr().out.startswith("libero_10: 10 tasks")
