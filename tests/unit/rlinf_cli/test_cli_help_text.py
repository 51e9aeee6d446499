"""``--help`` reads cleanly on every level (commands and the probes under ``probe``): no reST markup from
docstrings, no doubled percent signs."""

from __future__ import annotations

import argparse
import re

import pytest

from eval_runner.cli import main as eval_runner_main
from rlinf_cli.main import build_parser
from rlinf_clikit.help_format import plain_help

MARKUP = re.compile(r"``|:(mod|func|class|meth|attr):`")


def _every_parser(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _every_parser(child, (*path, name))
    return found


@pytest.mark.parametrize("argv", _every_parser(build_parser()), ids=" ".join)
def test_given_any_help_then_no_rest_markup_and_no_doubled_percent(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])

    out = capsys.readouterr().out
    assert not MARKUP.search(out), out
    assert "%%" not in out


def test_given_the_evaluate_help_then_it_describes_the_command_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        eval_runner_main(["--help"])

    out = capsys.readouterr().out
    assert "Evaluate one checkpoint on one suite" in out and "eval_runner.envs" not in out and "``" not in out


def test_plain_help_keeps_the_text_and_drops_the_markup() -> None:
    assert plain_help("see :mod:`eval_runner.envs` and ``--nproc N``; 95%% CI") == (
        "see eval_runner.envs and --nproc N; 95% CI"
    )
