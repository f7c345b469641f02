"""The packages import one way: no cycle among the modules of assistant, ingest, ui and evals.

Every import counts, at module level, inside functions and under TYPE_CHECKING, so a cycle cannot be
hidden by moving an import into a function. Parsed with `ast`; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("assistant", "ingest", "ui", "evals")


def module_files() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        # `from package import name` loads the package and, when `name` is a module, that module.
        return [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return []


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (a dotted name resolves to its longest module prefix)."""
    modules = module_files()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _imported(node, name, path.name == "__init__.py"):
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan; small enough to write out)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_and_relative_imports_are_edges() -> None:
    tree = ast.parse("def f():\n    from .sibling import x\n    import assistant.rules.validate\n")
    edges = [t for node in ast.walk(tree) for t in _imported(node, "assistant.rules.fit", False)]
    assert "assistant.rules.sibling" in edges and "assistant.rules.validate" in edges


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The tree's graph, parsed once for the tests below (parsing every module is most of their time)."""
    return import_graph()


def test_the_packages_have_no_import_cycle(graph: dict[str, set[str]]) -> None:
    assert "assistant.planning.search" in graph and graph["assistant.planning.search"]
    assert cycles(graph) == []


def test_rules_and_estimators_do_not_import_the_layers_above(graph: dict[str, set[str]]) -> None:
    """estimate/ sits below rules/, both below planning/ and the knowledge-base reader."""
    above = ("assistant.planning", "assistant.kb", "assistant.settings", "assistant.service")
    for name, targets in graph.items():
        if name.startswith(("assistant.rules", "assistant.estimate")):
            assert not [t for t in targets if t.startswith(above)], name
        if name.startswith("assistant.estimate"):
            # the one rules module they share: Megatron's own error texts (rules/upstream.py, no imports)
            shared = ("assistant.rules", "assistant.rules.upstream")
            assert not [t for t in targets if t.startswith("assistant.rules") and t not in shared], name


IMPORT_WORDS = ("from ", "import ")


def unexplained_lazy_imports(source: str) -> list[int]:
    """Lines of imports inside a function with no comment saying why: none on the line itself, and none on
    the line above the run of imports (blank lines between them included) that it belongs to."""
    lines = source.splitlines()
    found = set()
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Import | ast.ImportFrom) or "#" in lines[node.lineno - 1]:
                continue
            above = node.lineno - 2
            while above >= 0 and (not lines[above].strip() or lines[above].lstrip().startswith(IMPORT_WORDS)):
                if "#" in lines[above]:
                    break
                above -= 1
            if above < 0 or "#" not in lines[above]:
                found.add(node.lineno)
    return sorted(found)


def test_the_lazy_import_check_sees_an_unexplained_one() -> None:
    planted = "def f():\n    import json\n\n    # lazy\n    import csv\n\n    from io import BytesIO\n"
    assert unexplained_lazy_imports(planted) == [2]


def test_every_function_level_import_says_why() -> None:
    """No cycle needs a function-level import (the graph above counts them); those left are for start-up
    time or an optional dependency, and each says so in a comment."""
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(module_files().values())
        if (lines := unexplained_lazy_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
