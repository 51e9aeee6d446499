"""The packages of .importlinter's root_packages import each other without a cycle.

import-linter states the arrows that once made cycles (cli-on-top, clikit-at-the-bottom, adapters-downwards);
this test reads the whole graph, lazy imports included (grimp, import-linter's own engine), so a new cycle
between any two packages fails here with its path, whichever contract it slipped past.
"""

from __future__ import annotations

import configparser
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[3]


def root_packages() -> list[str]:
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    return config["importlinter"]["root_packages"].split()


def package_edges(graph: grimp.ImportGraph, packages: list[str]) -> dict[str, set[str]]:
    """importer package -> the packages some module of it imports."""
    edges: dict[str, set[str]] = {p: set() for p in packages}
    for module in graph.modules:
        importer = module.split(".")[0]
        if importer not in edges:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            target = imported.split(".")[0]
            if target != importer and target in edges:
                edges[importer].add(target)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as a path that ends where it starts; [] when there is none."""
    state: dict[str, str] = {}  # "open" while on the path, "done" once every successor was explored
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = "done"
        return []

    for start in sorted(edges):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_the_packages_import_each_other_without_a_cycle() -> None:
    packages = root_packages()
    graph = grimp.build_graph(*packages, include_external_packages=False)
    cycle = find_cycle(package_edges(graph, packages))
    assert cycle == [], "packages import each other in a circle: " + " -> ".join(cycle)


def test_given_a_circle_of_three_then_it_is_found_and_a_chain_is_not() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
