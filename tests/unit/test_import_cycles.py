"""No import cycles among the package's modules, counting every import — at module level and
inside functions — but those under ``if TYPE_CHECKING:`` (issue 25's rule: a lower layer gets
what it needs from above injected, never imported, not even lazily). ``lint-imports`` checks the
layers between packages; this checks the modules inside them too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import jupyter_turns

ROOT = Path(jupyter_turns.__file__).parent
PACKAGE = ROOT.name


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _imported(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target in modules and target != name:
                yield target


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: set(_imported(name, path, modules)) for name, path in modules.items()}


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50 and any(graph.values())  # the graph really was read
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import() -> None:
    graph = import_graph()
    graph[f"{PACKAGE}.errors"] = {*graph[f"{PACKAGE}.errors"], f"{PACKAGE}.kernel.keys"}
    cycles = _cycles(graph)
    assert any(f"{PACKAGE}.errors" in cycle for cycle in cycles)
