"""``python -m eval_runner.robotwin``: a thin alias of ``python -m eval_runner`` (:mod:`eval_runner.cli`).

RoboTwin is an env kind of the one evaluator (:mod:`eval_runner.envs.robotwin_kind`); this alias only
forwards to the one CLI, with the suite defaulting to ``robotwin`` when neither ``--suite`` nor
``--request`` is given. Kept so existing commands (the RoboTwin image's, docs/robotwin.md's) keep working.
"""

import sys
from collections.abc import Callable

from rlinf_aws.job_entry import run_job

PROG = "python -m eval_runner.robotwin"


def _load_main() -> Callable[[], int]:
    from eval_runner.cli import main

    return lambda: main(prog=PROG, default_suite="robotwin")


sys.exit(run_job(_load_main, program=PROG))
