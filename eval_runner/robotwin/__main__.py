"""``python -m eval_runner.robotwin``."""

import sys

from eval_runner.robotwin.cli import main

sys.exit(main())
