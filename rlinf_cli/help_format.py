"""Help formatting shared by the subcommands: prose is wrapped, the example lines are not."""

from __future__ import annotations

import argparse


class ExampleFormatter(argparse.HelpFormatter):
    """Wraps descriptions as argparse does, but prints a text starting with ``example`` line by line,
    so a command to copy is never broken across lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)
