"""``python -m infra_probes <probe> ...``: see infra_probes.probe_cli.

The import of the command happens inside :func:`rlinf_aws.job_entry.run_job`, so a probe Job that
cannot import or parse its arguments (a missing ``--path``) reports failure to the state machine at
once instead of going silent until the heartbeat timeout.
"""

import sys
from collections.abc import Callable

from rlinf_aws.job_entry import run_job


def _load_main() -> Callable[[], int]:
    from infra_probes.probe_cli import main

    return main


sys.exit(run_job(_load_main, program="python -m infra_probes"))
