"""Per-episode seeds derived from one run seed.

An episode's seed depends only on (run seed, suite, task, initial state), never on which worker ran it
or in which order: that is what makes a vectorized run reproducible and lets a crashed episode be
re-run with exactly the same seed.
"""

from __future__ import annotations

import hashlib

#: Seeds are kept below 2**31 so that every seeding API (numpy's legacy RandomState included) accepts them.
SEED_MODULUS = 2**31 - 1


def episode_seed(run_seed: int, suite: str, task_id: int, init_state: int) -> int:
    """A stable seed in ``[0, 2**31 - 1)`` for one episode of one run.

    A hash (not ``run_seed + i``) keeps seeds of neighbouring runs and tasks unrelated, so run 1's
    episode 0 does not replay run 0's episode 1.
    """
    key = f"rlinf-bench/v1/{run_seed}/{suite}/{task_id}/{init_state}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % SEED_MODULUS
