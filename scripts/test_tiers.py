#!/usr/bin/env python3
"""Run the test suite in parts (unit, integration, e2e, sim, the other venvs' tests, and the checks), a few
at a time, and print each part's wall time at the end.

    .venv/bin/python scripts/test_tiers.py [--rlinf-python PATH] [--robotwin-python PATH] [--jobs N]
        [--serial] [--tiers unit,sim,...] [--checks CMD] [--save-durations] [PYTEST ARGS...]

Every argument this script does not know goes to every pytest it starts (``-x``, ``-k EXPR``, ``-m EXPR``,
``--timeout 600``, test paths: a path under tests/ restricts the run to the tiers that hold it).

Concurrency (docs/performance.md, "The test suite", says why): each part is a separate pytest process and
``--jobs`` of them (default: one more than this machine's cores, 3 on the 2-core dev box) run at once, longest
first, the next one starting as soon as a slot is free. One more than the cores because no part keeps a core
busy all the time (it waits on its simulator workers, servers, subprocesses and timeouts): with one part per
core the cores idled 15 % of the run. The two long tiers (sim, e2e) are split in two parts each, their files
balanced by the times recorded in ``scripts/test_durations.json``, so the slots end together instead of one
waiting for the longest tier; ``--save-durations`` rewrites that file from this run's per-file times
(pytest's JUnit XML). The other venvs' tests (rlinf, robotwin) take slots like the rest, and ``--checks CMD``
(``make test``: ruff, import contracts, mypy, the deployment checks) runs as one more part, started first. A
part's output is kept in a log and printed whole when it ends (unprefixed, so pytest's ``N passed`` summary
lines stay as pytest wrote them); ``--serial`` runs the parts one at a time with their output streamed live.

Exit status: 0 when every part passed; 1 when any failed. pytest's exit code 5 ("no tests collected") is a
failure only for a part that should have had tests, i.e. when no selection (``-k``, ``-m``, ``--lf``,
``--deselect``, ``--ignore``, test paths) was passed. A venv whose python does not exist is skipped with a
note, or is an error under ``CI=true``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RLINF_TESTS = (
    "tests/unit/eval_runner/policies/test_rlinf_policy.py",
    "tests/unit/eval_runner/policies/test_rlinf_cli_errors.py",
    "tests/integration/policy_server/test_serve_rlinf_policy.py",
    "tests/sim/test_rlinf_rollout.py",
)

# Main-venv tiers: name -> test paths. tests/robotwin's main-venv tests (Job builder, callbacks, groups,
# seeds) are fast unit tests of the main packages; their runtime tests skip here and run in .venv-robotwin.
MAIN_TIERS: dict[str, tuple[str, ...]] = {
    "unit": ("tests/unit", "tests/robotwin"),
    "integration": ("tests/integration",),
    "e2e": ("tests/e2e",),
    "sim": ("tests/sim",),
}
# Tiers in the order --serial runs them (and the order parts of equal weight start in).
START_ORDER = ("sim", "e2e", "integration", "unit")
# Tiers run as several pytest processes, their files balanced by recorded time.
PARTS = {"sim": 2, "e2e": 2}
DURATIONS = REPO / "scripts" / "test_durations.json"
# A file with no recorded time (new) counts as this many seconds when balancing; a tier's weight when
# nothing of it is recorded (the other venvs') orders it after the recorded ones.
UNKNOWN_FILE_S = 5.0

HEARTBEAT_S = 240
SELECTION_OPTIONS = (
    "-k",
    "-m",
    "--lf",
    "--last-failed",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--sw",
    "--stepwise",
    "--co",
    "--collect-only",
)


@dataclass
class Tier:
    name: str
    argv: list[str]
    expect_tests: bool
    venv: str = "main"
    returncode: int | None = None
    wall_s: float = 0.0
    summary: str = ""
    note: str = ""
    log: Path | None = None
    status: str = field(default="")
    #: expected seconds (recorded per-file times), for the longest-first order
    weight: float = 0.0
    #: False for the checks: no pytest exit codes, no summary line
    pytest: bool = True


def split_selection(extra: list[str]) -> tuple[list[str], list[str]]:
    """Split pass-through args into (test paths under tests/, everything else)."""
    paths, rest = [], []
    for i, arg in enumerate(extra):
        prev = extra[i - 1] if i else ""
        base = arg.split("::", 1)[0]
        takes_value = prev.startswith("-") and "=" not in prev and prev not in ("-x", "-v", "-q", "-s", "-ra")
        if not arg.startswith("-") and not takes_value and base and (REPO / base).exists():
            rel = os.path.relpath((REPO / base).resolve(), REPO)
            if rel == "tests" or rel.startswith("tests" + os.sep):
                paths.append(arg if "::" not in arg else rel + arg[len(base) :])
                continue
        rest.append(arg)
    return paths, rest


def has_selection(args: list[str]) -> bool:
    """A selection that may leave a tier empty: -k/-m (also as -kEXPR), --lf, --deselect, --ignore, ..."""
    for a in args:
        if a.startswith(("-k", "-m")) and not a.startswith("--"):
            return True
        if any(a == o or a.startswith(o + "=") for o in SELECTION_OPTIONS):
            return True
    return False


def under(path: str, root: str) -> bool:
    p = path.split("::", 1)[0].rstrip("/")
    return p == root or p.startswith(root + "/")


def within(root: str, path: str) -> bool:
    """``root`` (a tier's folder) lies inside ``path`` (a folder the user named, e.g. tests)."""
    p = path.split("::", 1)[0].rstrip("/")
    return "::" not in path and (root == p or root.startswith(p + "/"))


def load_durations(path: Path) -> dict[str, float]:
    """Recorded seconds per test file (``--save-durations`` writes them); empty when there is no record."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}


def split_tier(
    name: str, roots: tuple[str, ...], parts: int, durations: dict[str, float]
) -> list[tuple[str, list[str], float]]:
    """The tier's test files in ``parts`` groups of about equal recorded time: (part name, files, seconds).

    Longest file first into the lightest group; a file with no record counts :data:`UNKNOWN_FILE_S`. One
    part keeps the tier's folders as they are (conftest files and non-file tests included)."""
    if parts <= 1:
        return [(name, list(roots), sum(v for k, v in durations.items() if any(under(k, r) for r in roots)))]
    files = sorted(str(p.relative_to(REPO)) for r in roots for p in (REPO / r).rglob("test_*.py") if p.is_file())
    weighted = sorted(((durations.get(f, UNKNOWN_FILE_S), f) for f in files), key=lambda x: (-x[0], x[1]))
    groups: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(parts)]
    for seconds, f in weighted:
        i = min(range(parts), key=lambda j: (groups[j][0], j))
        groups[i] = (groups[i][0] + seconds, [*groups[i][1], f])
    return [(f"{name} {i + 1}/{parts}", sorted(fs), w) for i, (w, fs) in enumerate(groups) if fs]


def file_durations(junit: Path) -> dict[str, float]:
    """Seconds per test file from one pytest JUnit XML report (setup, call and teardown together)."""
    out: dict[str, float] = {}
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return out
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        # tests.sim.test_x or tests.sim.test_x.TestClass: the file is the first dotted prefix that exists
        parts = classname.split(".")
        for n in range(len(parts), 0, -1):
            candidate = "/".join(parts[:n]) + ".py"
            if (REPO / candidate).is_file():
                out[candidate] = out.get(candidate, 0.0) + float(case.get("time") or 0.0)
                break
    return out


def build_tiers(opts: argparse.Namespace, extra: list[str]) -> tuple[list[Tier], list[Tier], list[str]]:
    paths, rest = split_selection(extra)
    selected = bool(paths) or has_selection(rest)
    common = ["-p", "no:cacheprovider"]
    wanted = set(opts.tiers.split(",")) if opts.tiers else None
    durations = getattr(opts, "durations", None) or {}
    errors: list[str] = []
    main: list[Tier] = []
    for name in START_ORDER:
        if wanted is not None and name not in wanted:
            continue
        roots = MAIN_TIERS[name]
        if paths:
            mine = [p for p in paths if any(under(p, r) for r in roots)]
            mine += [r for r in roots if any(within(r, p) for p in paths)]
            if not mine:
                continue
            main.append(Tier(name, [opts.python, "-m", "pytest", *mine, *common, *rest], expect_tests=not selected))
            continue
        for part_name, files, weight in split_tier(name, roots, PARTS.get(name, 1), durations):
            argv = [opts.python, "-m", "pytest", *files, *common, *rest]
            main.append(Tier(part_name, argv, expect_tests=not selected, weight=weight))

    other: list[Tier] = []
    ci = os.environ.get("CI", "").lower() == "true"
    for name, python, tests in (
        ("rlinf", opts.rlinf_python, list(RLINF_TESTS)),
        ("robotwin", opts.robotwin_python, ["tests/robotwin"]),
    ):
        if python is None or (wanted is not None and name not in wanted):
            continue
        if paths:
            tests = [p for p in paths if any(under(p, t) for t in tests)] or [
                t for t in tests if any(within(t, p) for p in paths)
            ]
            if not tests:
                continue
        weight = sum(v for k, v in durations.items() if any(under(k, t) for t in tests)) or UNKNOWN_FILE_S
        argv = [python, "-m", "pytest", *tests, *common, *rest]
        tier = Tier(name, argv, expect_tests=not selected, venv=name, weight=weight)
        if not (REPO / python).exists() and not Path(python).exists():
            message = f"{name}: {python} does not exist (make setup-{name} creates it)"
            if ci:
                errors.append(message)
                tier.returncode, tier.status, tier.note = 1, "ERROR: venv missing (CI=true)", "venv missing"
            else:
                print(f"note: skipping the {name} tests: {message}", flush=True)
                tier.status, tier.note = "skipped", "venv missing"
        other.append(tier)
    return main, other, errors


SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+ in [\d.]+s.*?|no tests ran.*?)\s*=*$")


def last_summary(text: str) -> str:
    """pytest's last line, "N passed, M skipped in 12.3s" (with or without the ===== around it)."""
    for line in reversed(text.splitlines()):
        if m := SUMMARY.match(line.strip()):
            return m.group(1)
    return ""


def finish(tier: Tier, text: str) -> None:
    rc = tier.returncode
    tier.summary = last_summary(text) if tier.pytest else ""
    if rc == 0:
        tier.status = "passed"
    elif rc == 5 and not tier.expect_tests and tier.pytest:
        tier.status = "no tests (selection)"
    elif rc == 5 and tier.pytest:
        tier.status = "FAILED (no tests collected)"
    else:
        tier.status = f"FAILED (exit {rc})"


def run_live(tier: Tier) -> None:
    print(f"\n##### tier {tier.name}: {shlex.join(tier.argv)}", flush=True)
    start = time.monotonic()
    proc = subprocess.Popen(
        tier.argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, errors="replace"
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    tier.returncode = proc.wait()
    tier.wall_s = time.monotonic() - start
    finish(tier, "".join(lines))


def run_concurrently(tiers: list[Tier], jobs: int, logdir: Path) -> None:
    """Start ``jobs`` tiers at a time (in list order); print each one's log whole when it ends."""
    lock = threading.Lock()
    queue = list(tiers)
    running: list[tuple[Tier, subprocess.Popen[bytes], float]] = []
    last_beat = time.monotonic()
    while queue or running:
        while queue and len(running) < jobs:
            tier = queue.pop(0)
            tier.log = logdir / f"{slug(tier.name)}.log"
            with lock:
                print(f"##### tier {tier.name} started: {shlex.join(tier.argv)} (log: {tier.log})", flush=True)
            fh = tier.log.open("wb")
            proc = subprocess.Popen(tier.argv, cwd=REPO, stdout=fh, stderr=subprocess.STDOUT)
            fh.close()
            running.append((tier, proc, time.monotonic()))
        time.sleep(0.5)
        if time.monotonic() - last_beat > HEARTBEAT_S:  # CI kills a job that is silent too long
            last_beat = time.monotonic()
            with lock:
                print(
                    "##### still running: "
                    + ", ".join(f"{t.name} ({time.monotonic() - s:.0f} s)" for t, _, s in running),
                    flush=True,
                )
        for item in list(running):
            tier, proc, start = item
            rc = proc.poll()
            if rc is None:
                continue
            running.remove(item)
            tier.returncode, tier.wall_s = rc, time.monotonic() - start
            assert tier.log is not None
            text = tier.log.read_text(errors="replace")
            finish(tier, text)
            with lock:
                print(f"\n##### tier {tier.name} ({tier.wall_s:.0f} s, {tier.status}): output", flush=True)
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
                print(f"##### end of tier {tier.name}", flush=True)


def slug(name: str) -> str:
    """A part's name as a file name: ``sim 1/2`` -> ``sim-1-of-2``."""
    return name.replace(" ", "-").replace("/", "-of-")


def save_durations(logdir: Path, tiers: list[Tier], path: Path) -> int:
    """Merge this run's per-file times (the parts' JUnit XML) into ``path``; the number of files recorded."""
    recorded = load_durations(path)
    measured: dict[str, float] = {}
    for tier in tiers:
        for f, seconds in file_durations(logdir / f"{slug(tier.name)}.xml").items():
            measured[f] = measured.get(f, 0.0) + seconds
    recorded.update({f: round(v, 1) for f, v in measured.items()})
    path.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")
    return len(measured)


def table(tiers: list[Tier], total_s: float) -> str:
    rows = [("tier", "venv", "wall", "status", "pytest summary")]
    for t in tiers:
        wall = f"{t.wall_s:7.1f} s" if t.returncode is not None and t.note == "" else "      -  "
        rows.append(
            (t.name, t.venv, wall, t.status + (f" ({t.note})" if t.note and t.note not in t.status else ""), t.summary)
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    out = ["", "##### test tiers"]
    for r in rows:
        out.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(r[:4])) + "  " + r[4])
    out.append(f"total wall time: {total_s:.1f} s ({total_s / 60:.1f} min)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], allow_abbrev=False, epilog="Unknown arguments are passed to every pytest."
    )
    parser.add_argument("--rlinf-python", help="python of .venv-rlinf: runs the rlinf: policy tests there")
    parser.add_argument("--robotwin-python", help="python of .venv-robotwin: runs tests/robotwin there")
    parser.add_argument("--python", default=sys.executable, help="python of the main venv (default: this one)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=int(os.environ.get("TEST_TIER_JOBS", len(os.sched_getaffinity(0)) + 1)),
        help="parts run at once (default: this machine's cores + 1, or $TEST_TIER_JOBS)",
    )
    parser.add_argument("--serial", action="store_true", help="one tier at a time, output streamed live")
    parser.add_argument("--tiers", help="comma-separated subset: unit,integration,e2e,sim,rlinf,robotwin")
    parser.add_argument("--log-dir", type=Path, help="where the tiers' logs go (default: a temporary folder)")
    parser.add_argument(
        "--checks",
        metavar="CMD",
        help="a shell command run as one more part beside the tests, started first (make test: make checks)",
    )
    parser.add_argument(
        "--save-durations",
        action="store_true",
        help="rewrite scripts/test_durations.json from this run's per-file times (balances the next run's parts)",
    )
    opts, extra = parser.parse_known_args(argv)
    opts.durations = load_durations(DURATIONS)
    if opts.tiers and (bad := set(opts.tiers.split(",")) - set(MAIN_TIERS) - {"rlinf", "robotwin"}):
        parser.error(f"unknown tiers: {', '.join(sorted(bad))}")

    main_tiers, other_tiers, errors = build_tiers(opts, extra)
    for message in errors:
        print(f"error: {message} (CI=true: every venv's tests must run)", file=sys.stderr, flush=True)
    start = time.monotonic()
    logdir = opts.log_dir or Path(tempfile.mkdtemp(prefix="test-tiers-"))
    logdir.mkdir(parents=True, exist_ok=True)
    tiers = main_tiers + other_tiers
    runnable = [t for t in tiers if t.status == ""]
    for tier in runnable:
        tier.argv.append(f"--junitxml={logdir / (slug(tier.name) + '.xml')}")
    if opts.checks:  # not a pytest: no JUnit report, no summary line; it starts before every part
        checks = Tier("checks", ["bash", "-c", opts.checks], expect_tests=False, venv="-", pytest=False)
        tiers.insert(0, checks)
        runnable.insert(0, checks)
    if opts.serial or opts.jobs <= 1:
        for tier in runnable:
            run_live(tier)
    else:  # the checks, then longest first; a stable sort keeps START_ORDER among parts of equal weight
        run_concurrently(sorted(runnable, key=lambda t: (t.pytest, -t.weight)), opts.jobs, logdir)
    if opts.save_durations:
        n = save_durations(logdir, runnable, DURATIONS)
        print(f"recorded the times of {n} test files in {os.path.relpath(DURATIONS, REPO)}", flush=True)
    print(table(tiers, time.monotonic() - start), flush=True)
    failed = [t.name for t in tiers if t.status.startswith(("FAILED", "ERROR"))]
    if failed:
        print(f"failed tiers: {', '.join(failed)}", flush=True)
        return 1
    if not tiers:
        print("no tier matched the given test paths", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
