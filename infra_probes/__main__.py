"""``python -m infra_probes <probe> ...``: see infra_probes.probe_cli."""

import sys

from infra_probes.probe_cli import main

sys.exit(main())
