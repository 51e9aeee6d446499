"""The adaptive budget (``--adaptive``) against the brief's fixed 3 x 50 design, by seeded simulation.

For each scenario of bench/interval_coverage.py with at least one task's worth of states, simulates a
previous checkpoint (evaluated with 3 runs, or 6 when it was itself extended) and a current one that is
unchanged or 2 points worse, compared with the previous checkpoint (paired) and with a baseline at the
previous checkpoint's population rate (2-point tolerance). Reports, for both designs: the false-alarm
rate (called "below" the previous checkpoint with no drop; goal <= 5 %), the power to catch a 2-point
drop (goal >= 0.80) and the mean rounds (runs over every state) spent (goal <= the fixed design's 3).
Prints a table and saves bench/results/adaptive_budget.json. Run:

    .venv/bin/python bench/adaptive_budget.py [--replicates 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from interval_coverage import SCENARIOS

from rlinf_bench.stats.adaptive import AdaptiveDesign
from rlinf_bench.stats.simulation import adaptive_vs_fixed

RESULTS = Path(__file__).parent / "results" / "adaptive_budget.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    design = AdaptiveDesign()
    started = time.perf_counter()
    rows = []
    print(f"{'scenario':38} {'ref':>3} {'drop':>4} {'fixed below':>11} {'adaptive below':>14} {'rounds':>6}  histogram")
    for i, (name, clusters, runs, mean, conc) in enumerate(SCENARIOS):
        if clusters < 50 or runs != 3:
            continue  # a smoke budget has too few states to decide anything early; the design chooses the runs
        for ref_rounds in (3, 6):
            for j, drop in enumerate((0.0, 0.02)):
                res = adaptive_vs_fixed(
                    seed=args.seed + 100 * i + 10 * ref_rounds + j,
                    replicates=args.replicates,
                    drop=drop,
                    clusters=clusters,
                    mean=mean,
                    concentration=conc,
                    design=design,
                    reference_rounds=ref_rounds,
                )
                rows.append(
                    {
                        "scenario": name,
                        "clusters": clusters,
                        "mean": mean,
                        "concentration": conc,
                        "reference_rounds": ref_rounds,
                        **res.as_dict(),
                    }
                )
                print(
                    f"{name:38} {ref_rounds:>3} {drop:>4.2f} {res.fixed_below_previous:>11.3f} "
                    f"{res.adaptive_below_previous:>14.3f} {res.adaptive_mean_rounds:>6.2f}  {res.adaptive_rounds_histogram}"
                )
    elapsed = time.perf_counter() - started
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "replicates": args.replicates,
                "seed": args.seed,
                "design": {
                    "max_rounds": design.max_rounds,
                    "planned_rounds": design.planned_rounds,
                    "alpha": design.alpha,
                    "futility_power": design.futility_power,
                    "boundaries_z": [round(design.boundary(k), 4) for k in range(1, design.max_rounds + 1)],
                },
                "rows": rows,
                "wall_s": round(elapsed, 1),
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nsaved {RESULTS} ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
