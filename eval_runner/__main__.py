"""``python -m eval_runner``: see :mod:`eval_runner.cli`.

The import of the command happens inside :func:`rlinf_aws.job_entry.run_job`, so a Job that cannot even
import or parse its arguments still reports failure to the state machine instead of going silent.
"""

import sys
from collections.abc import Callable

from rlinf_aws.job_entry import run_job


def _load_main() -> Callable[[], int]:
    from eval_runner.cli import main

    return main


if __name__ == "__main__":
    sys.exit(run_job(_load_main, program="python -m eval_runner"))
