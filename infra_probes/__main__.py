"""``python -m infra_probes <probe> ...``: see infra_probes.cli."""

import sys

from infra_probes.cli import main

sys.exit(main())
