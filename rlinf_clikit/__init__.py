"""Command-line helpers shared by every command of the project (the ``rlinf-bench`` subcommands, the eval
and probe Jobs' own entry points): argument grammar, help formatting, ``--json`` output. Built on argparse
alone: this package imports no other package of the project, so any of them may use it."""
