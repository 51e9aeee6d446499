"""docs/architecture.md follows .importlinter, and the docs name only files and modules that exist.

.importlinter is the source of truth for the layout: its ``root_packages`` are the packages, and its
contracts say which arrows between them are allowed. The architecture page draws those packages (a table
whose first column is their names, and one Mermaid node each) and the arrows the code really has; these
tests fail when a package is added, removed or renamed on one side only, or when an import between two
packages appears or disappears without the picture following.

The second half checks every ``path/like/this.py`` and ``module.like.this`` the docs and README.md name,
so that a move of a file or module cannot leave a page pointing at nothing.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "architecture.md"
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]


# --- the architecture page and .importlinter ---------------------------------------------------------


def root_packages() -> list[str]:
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    return config["importlinter"]["root_packages"].split()


def _section(text: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"docs/architecture.md has no '## {heading}' section"
    return match.group(1)


def page_table_packages(text: str) -> list[str]:
    """The first column of the table in the page's "Packages" section: one package name per row."""
    rows = [line for line in _section(text, "Packages").splitlines() if line.startswith("|")]
    names = [row.split("|")[1].strip().strip("`") for row in rows[2:]]  # after the header and |---|
    assert names, "the Packages section holds no table"
    return names


def _mermaid(text: str) -> str:
    blocks = re.findall(r"```mermaid\n(.*?)```", _section(text, "Packages"), re.S)
    assert len(blocks) == 1, "the Packages section should hold exactly one Mermaid drawing"
    return blocks[0]


NODE = re.compile(r"^\s*(\w+)\[", re.M)
# A --> B (an import), A -. "why" .-> B (an import that a contract ignores)
EDGE = re.compile(r"^\s*(\w+)\s*(?:-->|-\.[^\n]*?\.->)\s*(\w+)\s*$", re.M)


def page_nodes(text: str) -> list[str]:
    return NODE.findall(_mermaid(text))


def page_edges(text: str) -> set[tuple[str, str]]:
    return set(EDGE.findall(_mermaid(text)))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def real_edges(packages: list[str]) -> dict[tuple[str, str], str]:
    """(importer, imported) between root packages, from every import in the code (lazy ones too), with one
    example each; relative imports stay inside their package, so only absolute ones can cross."""
    edges: dict[tuple[str, str], str] = {}
    for package in packages:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    targets = [node.module]
                else:
                    continue
                for target in targets:
                    root = target.split(".")[0]
                    if root != package and root in packages:
                        edges.setdefault((package, root), f"{_module_name(path)} -> {target}")
    return edges


def test_the_page_lists_exactly_the_import_linter_root_packages() -> None:
    text = PAGE.read_text()
    expected = root_packages()
    assert page_table_packages(text) == expected, (
        "docs/architecture.md's Packages table must list .importlinter's root_packages, in its order"
    )
    assert sorted(page_nodes(text)) == sorted(expected), (
        "docs/architecture.md's Mermaid drawing must have one node per .importlinter root package"
    )


def test_every_package_on_the_page_is_a_folder() -> None:
    text = PAGE.read_text()
    missing = [name for name in {*page_table_packages(text), *page_nodes(text)} if not (REPO / name).is_dir()]
    assert missing == []


def test_the_drawing_has_exactly_the_imports_between_packages_that_the_code_has() -> None:
    text = PAGE.read_text()
    real = real_edges(root_packages())
    drawn = page_edges(text)
    undrawn = {f"{a} --> {b}": example for (a, b), example in real.items() if (a, b) not in drawn}
    stale = sorted(f"{a} --> {b}" for a, b in drawn - real.keys())
    assert undrawn == {}, "imports between packages that docs/architecture.md does not draw"
    assert stale == [], "arrows on docs/architecture.md that no import makes any more"


# --- every file and module the docs name exists ------------------------------------------------------

#: Top-level folders of this repository: a path that starts with one of them names a file here.
REPO_FOLDERS = {"bench", "deploy", "docker", "docs", "events", "examples", "layers", "statemachine", "tests"}
#: Paths that are not files of this repository: other projects' (RLinf, openpi) that share a top-level folder
#: name with it, and folders a set-up step creates (npm's, for the ASL validator).
NOT_IN_REPO = {
    "examples/libero/main.py",
    "examples/embodiment/config/libero_spatial_grpo_openvlaoft.yaml",
    "deploy/tools/node_modules",
}

PATH = re.compile(r"(?<![\w./<>*{}$-])([A-Za-z_][\w.-]*(?:/[\w.<>*-]+)+/?)")
# a name with a wildcard (rlinf_aws.state_*) is not checked
DOTTED = re.compile(r"(?<![\w./-])([a-z_]\w*(?:\.(?:\{[\w,]+\}|[A-Za-z_]\w*))+)(?![\w*])")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _mentions(pattern: re.Pattern[str], text: str) -> Iterator[str]:
    for match in pattern.finditer(text):
        yield match.group(1).rstrip(".")


def _exists(rel: str) -> bool:
    pattern = re.sub(r"<[^>]+>", "*", rel.rstrip("/"))
    if "*" not in pattern:
        return (REPO / pattern).exists()
    head = pattern.split("*")[0].rsplit("/", 1)[0]
    return any(fnmatch.fnmatch(str(p.relative_to(REPO)), pattern) for p in (REPO / head).rglob("*"))


def missing_paths(page: Path, packages: list[str]) -> list[str]:
    text = page.read_text()
    folders = REPO_FOLDERS | set(packages)
    missing = [
        rel
        for rel in _mentions(PATH, text)
        if rel.split("/")[0] in folders and rel not in NOT_IN_REPO and not _exists(rel)
    ]
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#")[0]).exists():
            missing.append(f"link {target}")
    return missing


@cache
def _module_file(dotted: str) -> Path | None:
    base = REPO.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return base if base.is_dir() else None  # a namespace package (functions, functions.<name>)


@cache
def _top_level_names(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return frozenset(names)


@cache
def _dotted_literals() -> frozenset[str]:
    """Dotted names that are strings in the code, not modules: MLflow tags, entry-point groups."""
    sources = [REPO / "pyproject.toml", *(p for pkg in root_packages() for p in (REPO / pkg).rglob("*.py"))]
    found: set[str] = set()
    for source in sources:
        found.update(re.findall(r"[\"']([a-z_]\w*(?:\.\w+)+)[\"']", source.read_text()))
    return frozenset(found)


def _module_exists(dotted: str) -> bool:
    if dotted in _dotted_literals():
        return True
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(".".join(parts[:cut]))
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        # module.name or module.Class.attribute: the name must be defined at the module's top level
        return module.is_file() and len(rest) <= 2 and rest[0] in _top_level_names(module)
    return False


def missing_modules(page: Path, packages: list[str]) -> list[str]:
    missing: list[str] = []
    for dotted in _mentions(DOTTED, page.read_text()):
        if dotted.split(".")[0] not in packages:
            continue
        head, _, braces = dotted.partition(".{")
        names = [f"{head}.{name}" for name in braces.rstrip("}").split(",")] if braces else [dotted]
        missing.extend(name for name in names if not _module_exists(name))
    return missing


def test_every_file_path_the_docs_name_exists() -> None:
    packages = root_packages()
    missing = {page.name: found for page in PAGES if (found := missing_paths(page, packages))}
    assert missing == {}


def test_every_module_the_docs_name_exists() -> None:
    packages = root_packages()
    missing = {page.name: found for page in PAGES if (found := missing_modules(page, packages))}
    assert missing == {}
