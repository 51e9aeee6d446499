"""`rlinf-bench --help` is written for users: what the tool does, the flow's order, one example each."""

from __future__ import annotations

import pytest

from rlinf_cli.main import FLOW_ORDER, build_parser, flow_rank


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return [a.dest for a in sub._choices_actions]


def test_given_help_then_it_says_what_the_tool_does_not_how_it_is_built(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert "evaluates RLinf checkpoints on LIBERO" in out and "rlinf-bench doctor" in out
    assert "register(subparsers)" not in out and "Entry point" not in out


def test_given_help_then_commands_follow_the_flow_and_the_rest_come_after() -> None:
    commands = _commands()
    in_flow = [c for c in commands if c in FLOW_ORDER]
    assert commands[: len(in_flow)] == sorted(in_flow, key=FLOW_ORDER.index)
    core = ["evaluate", "compare", "report", "probe", "trigger", "backfill"]
    assert [c for c in commands if c in core] == core
    assert "doctor" in commands[len(in_flow) :] and flow_rank("doctor") == len(FLOW_ORDER)


def test_given_every_subcommand_then_its_help_shows_one_example(capsys: pytest.CaptureFixture[str]) -> None:
    for command in _commands():
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        out = capsys.readouterr().out
        assert "example:" in out, command
        assert f"rlinf-bench {command}" in out.split("example:", 1)[1], command


def test_given_every_subcommand_then_its_help_has_no_doubled_percent_signs(capsys: pytest.CaptureFixture[str]) -> None:
    for command in _commands():
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        assert "%%" not in capsys.readouterr().out, command


@pytest.mark.parametrize(
    ("argv", "verbose", "quiet"),
    [
        (["-v", "schemas"], True, False),
        (["schemas", "-v"], True, False),
        (["schemas", "--quiet"], False, True),
        (["-q", "schemas"], False, True),
        (["schemas"], False, False),
    ],
)
def test_given_verbosity_flags_before_or_after_the_command_then_both_count(
    argv: list[str], verbose: bool, quiet: bool
) -> None:
    import logging

    from rlinf_cli.main import log_level

    args = build_parser().parse_args(argv)
    assert (bool(args.verbose), bool(args.quiet)) == (verbose, quiet)
    assert log_level(args) == (logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
