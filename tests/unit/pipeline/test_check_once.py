"""A request is checked once, at its plan: the trial count (and the rest of the request) is checked by the Plan
state, by the route that builds Jobs without the workflow (its own plan), and, outside the route, by the local
commands' budget flags before anything starts; the Job builders and the submit state trust the plan. The Job's
edge (eval_runner) checks its one run."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
#: The core's request checks (rlinf_bench.request_checks): calling one of them checks the trial count.
CHECKS = {"validate_request", "check_suite", "check_run"}
#: The product packages between the checkpoint's event and the Job (the Job's own edge is eval_runner's).
ROUTE = ("rlinf_bench", "rlinf_aws", "rlinf_k8s", "rlinf_local", "rlinf_cli", "rlinf_tracking", "functions")
#: Where a request check may run, outside the Job: module -> the check it calls.
EXPECTED = {
    "rlinf_aws/state_plan.py": {"validate_request"},  # the Plan state
    "rlinf_k8s/jobs.py": {"validate_request"},  # jobs_for_request: the plan of the route without the workflow
    "rlinf_local/runs.py": {"validate_request"},  # --trials/--runs on a local command, refused before it starts
}


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in CHECKS:
                names.add(name)
    return names


def test_the_request_is_checked_at_its_plan_and_nowhere_else_on_the_route() -> None:
    found = {}
    for package in ROUTE:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == "rlinf_bench/request_checks.py":
                continue  # the checks themselves
            called = _calls(path)
            if called:
                found[rel] = called
    assert found == EXPECTED


#: Every product package: the trial count may be compared with a suite's initial states nowhere else.
PRODUCT = (*ROUTE, "rlinf_doctor", "rlinf_clikit", "eval_runner", "infra_probes")


def _trial_count_comparisons(path: Path) -> set[str]:
    """The functions of ``path`` that compare ``trials_per_task`` with something larger (``trials_per_task > n``)."""
    found = set()
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.Gt):
                left = node.left
                name = left.attr if isinstance(left, ast.Attribute) else left.id if isinstance(left, ast.Name) else ""
                if name == "trials_per_task":
                    found.add(fn.name)
    return found


def _product_files() -> list[tuple[str, Path]]:
    return [(p.relative_to(REPO).as_posix(), p) for pkg in PRODUCT for p in sorted((REPO / pkg).rglob("*.py"))]


def test_the_trial_count_is_compared_with_the_initial_states_at_the_plan_and_at_the_jobs_edge_only() -> None:
    found = {rel: fns for rel, path in _product_files() if (fns := _trial_count_comparisons(path))}
    assert found == {
        "rlinf_bench/request_checks.py": {"check_suite"},  # Plan, through validate_request
        # The Job's edge: each env kind against the suite as its image has it (LIBERO's files, RoboTwin's protocol).
        "eval_runner/envs/libero_kind.py": {"check_run"},
        "eval_runner/envs/robotwin_kind.py": {"check_run"},
    }


def test_the_jobs_edge_checks_its_run_once() -> None:
    callers = {rel for rel, path in _product_files() if "check_run" in _calls(path)}
    assert callers == {"eval_runner/cli_checks.py"}
