"""Delete each verdict guard in a copy of the tree and check that a verdict test fails (manual check).

Run: ``.venv/bin/python -m tests.unit.stats.mutate_guards`` (about 2 minutes; not collected by pytest).
Each entry below removes one guard of rlinf_bench/stats/verdicts.py; a deletion no test notices is
printed as SURVIVED and makes the exit status 1.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[3]
MUTANTS = [
    (
        "baseline: incomplete suite",
        "    if not suite.complete or not suite.states:\n        return _incomplete(suite, **common)",
        "    if not suite.states:\n        return _incomplete(suite, **common)",
    ),
    (
        "baseline: no states",
        "    if not suite.complete or not suite.states:\n        return _incomplete(suite, **common)",
        "    if not suite.complete:\n        return _incomplete(suite, **common)",
    ),
    ("baseline: task subset", "    if partial:\n", "    if False:\n"),
    (
        "baseline: subset only for suite-level numbers",
        "partial = _partial_suite(suite) if task_id is None else None",
        "partial = _partial_suite(suite)",
    ),
    ("subset: task count", "len(suite.tasks) >= spec.n_tasks", "True"),
    (
        "not_comparable suite",
        "            if ref is not None and reason is not None:\n                common",
        "            if False:\n                common",
    ),
    (
        "not_comparable task",
        "            if ref is not None and reason is not None:\n                per_task",
        "            if False:\n                per_task",
    ),
    ("not_comparable average", "        if reasons:\n", "        if False:\n"),
    ("average: incomplete suite", "if not s.complete or not s.states]", "if not s.states]"),
    ("average: no states", "if not s.complete or not s.states]", "if not s.complete]"),
    (
        "average: missing suite",
        "        if len(suites) != len(found):\n            continue",
        "        if not suites:\n            continue",
    ),
    (
        "previous: current incomplete",
        "    if not current.complete or not current.states:",
        "    if not current.states:",
    ),
    (
        "previous: current no states",
        "    if not current.complete or not current.states:",
        "    if not current.complete:",
    ),
    (
        "previous: reference incomplete",
        "    if not reference.complete or not reference.states:",
        "    if not reference.states:",
    ),
    (
        "previous: reference no states",
        "    if not reference.complete or not reference.states:",
        "    if not reference.complete:",
    ),
    (
        "history: incomplete skipped",
        "if s is None or not s.complete or s.success_rate_mean",
        "if s is None or s.success_rate_mean",
    ),
    ("history: same checkpoint skipped", " or h.checkpoint_uri == current.checkpoint_uri:", ":"),
    ("history: later steps skipped", "        if step is not None and h_step >= step:\n            continue", ""),
    ("best only when it differs", "best[0] != previous[0]", "True"),
    (
        "no best with an explicit previous",
        "            best = None\n",
        "            best = pick_previous_and_best(report, history, suite.suite)[1]\n",
    ),
    ("previous/best: only comparable evaluations", "    if differences:\n", "    if False:\n"),
    (
        "best: only among comparable evaluations",
        "if mine is None or not reference_differences(mine, c[2])]",
        "]",
    ),
    ("pairing: different states refused", "    if cur.keys() != ref.keys():\n", "    if False:\n"),
    ("pairing: different seeds refused", "    if differ:\n", "    if False:\n"),
    ("flips: only between complete suites", "if suite.complete and previous[1].complete else []", ""),
    ("below with changed environment says so", "    if changes and value == VerdictValue.BELOW:", "    if False:"),
    ("episode errors noted", "        if suite.episode_errors:\n", "        if False:\n"),
]
TESTS = [
    "tests/unit/stats/test_verdicts.py",
    "tests/unit/stats/test_verdict_guards.py",
    "tests/unit/stats/test_flips_and_pairing.py",
]


def main() -> int:
    """Apply each deletion in turn; return 1 when any survived."""
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-mutants-") as tmp:
        return _run(Path(tmp))


def _run(dst: Path) -> int:
    for d in ("rlinf_bench", "tests"):
        shutil.copytree(SRC / d, dst / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(SRC / "pyproject.toml", dst / "pyproject.toml")
    target = dst / "rlinf_bench/stats/verdicts.py"
    original = target.read_text()
    survived = []
    for name, old, new in MUTANTS:
        if original.count(old) != 1:
            print(f"?? {name}: pattern found {original.count(old)} times")
            survived.append(name)
            continue
        target.write_text(original.replace(old, new))
        tests = [t for t in TESTS if (dst / t).exists()]
        r = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
            cwd=dst,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(dst), "PATH": "/usr/bin:/bin", "HOME": str(dst)},
            check=False,
        )
        failed = r.returncode != 0
        line = [x for x in r.stdout.splitlines() if x.startswith("FAILED")][:1]
        print(f"{'killed ' if failed else 'SURVIVED'} {name}: {line[0] if line else r.stdout.strip().splitlines()[-1]}")
        if not failed:
            survived.append(name)
    target.write_text(original)
    print(f"{len(MUTANTS) - len(survived)} of {len(MUTANTS)} guard deletions made a test fail")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
