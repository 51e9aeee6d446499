"""Coverage of the 95 % intervals and power of the verdict tests, by seeded simulation.

Prints a table and saves bench/results/interval_coverage.json. Scenarios: states of heterogeneous
difficulty (Beta-distributed per-state success probabilities, every run replaying the same states),
homogeneous states, rates near 100 %, and a tiny smoke-test budget. Run:

    .venv/bin/python bench/interval_coverage.py [--replicates 4000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rlinf_bench.stats.simulation import coverage, power_of_drop

RESULTS = Path(__file__).parent / "results" / "interval_coverage.json"

# name, clusters (task x initial state), runs, mean rate, Beta concentration (small = heterogeneous)
SCENARIOS = [
    ("one task, heterogeneous states", 50, 3, 0.8, 2.0),
    ("LIBERO suite (10x50), heterogeneous", 500, 3, 0.9, 2.0),
    ("LIBERO suite, homogeneous states", 500, 3, 0.9, 1e6),
    ("near 100 %, heterogeneous", 500, 3, 0.98, 1.0),
    ("smoke budget (2 tasks x 3 states)", 6, 3, 0.7, 2.0),
    ("single run, heterogeneous", 500, 1, 0.9, 2.0),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=4000)
    parser.add_argument("--power-replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    started = time.perf_counter()
    rows = []
    print(
        f"{'scenario':40} {'C':>4} {'R':>2} {'p':>5} {'Wilson cov':>10} {'clustered cov':>13} {'W width':>8} {'C width':>8}"
    )
    for i, (name, clusters, runs, mean, conc) in enumerate(SCENARIOS):
        res = coverage(
            seed=args.seed + i, replicates=args.replicates, clusters=clusters, runs=runs, mean=mean, concentration=conc
        )
        row = {"scenario": name, "clusters": clusters, "runs": runs, "concentration": conc, **res.as_dict()}
        rows.append(row)
        print(
            f"{name:40} {clusters:>4} {runs:>2} {mean:>5.2f} {res.wilson_coverage:>10.3f} {res.clustered_coverage:>13.3f} "
            f"{res.wilson_mean_width:>8.3f} {res.clustered_mean_width:>8.3f}"
        )
    power = []
    print(
        f"\n{'true drop':>9} {'paired':>7} {'2-prop (deff)':>13} {'2-prop (naive)':>14}   (share called 'below', alpha 0.05, 10x50 states, 3 runs)"
    )
    for j, drop in enumerate((0.0, 0.02, 0.05)):
        res_p = power_of_drop(seed=args.seed + 100 + j, replicates=args.power_replicates, drop=drop)
        power.append(res_p.as_dict())
        print(
            f"{drop:>9.2f} {res_p.paired_detection:>7.3f} {res_p.unpaired_detection:>13.3f} {res_p.naive_detection:>14.3f}"
        )
    elapsed = time.perf_counter() - started
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "replicates": args.replicates,
                "power_replicates": args.power_replicates,
                "seed": args.seed,
                "coverage": rows,
                "power": power,
                "wall_s": round(elapsed, 1),
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nsaved {RESULTS} ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
