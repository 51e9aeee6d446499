"""``python -m eval_runner``: see :mod:`eval_runner.cli`."""

import sys

from eval_runner.cli import main

if __name__ == "__main__":
    sys.exit(main())
