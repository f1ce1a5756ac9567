"""The plugin's shape, as a new maintainer reads it: no import circle of more than 3 modules
(imports inside functions count, `if TYPE_CHECKING:` ones do not), no class over 300 lines, no
function over 60 (docs/development.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[2] / "plugin"
PACKAGE = "pytest_reasoning_evals"
MOST_IN_A_CIRCLE = 3
LONGEST_CLASS = 300
LONGEST_FUNCTION = 60


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join([PACKAGE, *(parts[:-1] if parts[-1] == "__init__" else parts)])


def type_checking_nodes(tree: ast.AST) -> set[int]:
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(child) for child in ast.walk(node)}
    return inside


def imports_of(name: str, source: str, is_package: bool, modules: set[str]) -> set[str]:
    """The plugin modules `source` (module `name`) imports; `from . import x` imports x, not the package."""
    tree = ast.parse(source)
    skipped = type_checking_nodes(tree)
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            module = base if node.level else node.module
            found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names}
    return (found & modules) - {name}


def import_graph(root: Path) -> dict[str, set[str]]:
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    return {
        name: imports_of(name, path.read_text(encoding="utf-8"), path.name == "__init__.py", set(paths))
        for name, path in paths.items()
    }


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            step = next((w for w in edges if w not in index or w in stack), None)
            if step is not None and step not in index:
                index[step] = low[step] = len(index)
                stack.append(step)
                work.append((step, iter(sorted(graph[step]))))
                continue
            if step is not None:
                low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while component.isdisjoint({node}):
                    component.add(stack.pop())
                if len(component) > 1:
                    found.append(component)
    return found


def too_long(root: Path) -> list[str]:
    long = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            limit = LONGEST_CLASS if isinstance(node, ast.ClassDef) else LONGEST_FUNCTION
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    long.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return long


def test_no_import_circle_of_more_than_three_modules() -> None:
    graph = import_graph(PLUGIN)
    assert len(graph) > 60
    assert [sorted(c) for c in circles(graph) if len(c) > MOST_IN_A_CIRCLE] == []


def test_no_class_over_300_lines_and_no_function_over_60() -> None:
    assert too_long(PLUGIN) == []


def test_the_check_sees_a_circle_through_an_import_inside_a_function(tmp_path) -> None:
    sources = {
        "a.py": "from pytest_reasoning_evals import b\n",
        "b.py": "def f():\n    from pytest_reasoning_evals.c import x\n",
        "c.py": "from . import d\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_reasoning_evals import e\n"
        "import pytest_reasoning_evals.a\n",
        "e.py": "from pytest_reasoning_evals import a\n",
    }
    for name, source in sources.items():
        (tmp_path / name).write_text(source)
    found = circles(import_graph(tmp_path))
    assert [sorted(c) for c in found] == [[f"{PACKAGE}.{m}" for m in "abcd"]]  # e's import is for type checking only


def test_the_check_sees_a_long_function(tmp_path) -> None:
    (tmp_path / "m.py").write_text("def f():\n" + "    x = 1\n" * LONGEST_FUNCTION)
    assert too_long(tmp_path) == ["m.py:1 f (61 lines)"]
