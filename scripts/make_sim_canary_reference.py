"""Regenerate the simulator canary's reference: ``rlinf_bench/data/sim_canary_reference.json``.

Plays ``builtin:expert`` (a scripted expert with simulator access, not a learned policy) at noise 0 on
the canary set (eval_runner.sim_canary.CANARY) with the installed simulator and records each episode's
fingerprint and the versions (mujoco, robosuite, rlinf-libero, numpy). Run it on the pinned versions
(``make setup-main``) and only on purpose: the file is what every later play is compared with.

    .venv/bin/python scripts/make_sim_canary_reference.py [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval_runner.sim_canary import CANARY, REFERENCE, play  # noqa: E402

DEFAULT_OUT = ROOT / "rlinf_bench" / "data" / REFERENCE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    fingerprint = play(CANARY)
    if fingerprint.perturbed:  # never: play() is called without changes; kept as a guard for edits
        raise SystemExit("a perturbed play cannot be a reference")
    args.out.write_text(fingerprint.model_dump_json(indent=2) + "\n")
    wins = sum(e.success for e in fingerprint.episodes)
    print(f"{args.out}: {len(fingerprint.episodes)} episodes ({wins} successes), versions {fingerprint.versions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
