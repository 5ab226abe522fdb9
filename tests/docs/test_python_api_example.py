"""docs/python-api.md's example defines every name it uses (issue 45: it passed a
`search_notes` tool that nothing defined). Checked without running it: it talks to Claude."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def _undefined(source: str) -> list[str]:
    """The names ``source`` reads that it never binds (imports, assignments, defs, builtins)."""
    tree = ast.parse(source)
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bound.add(node.name)
            bound.update(a.arg for a in node.args.args)
        elif isinstance(node, ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.comprehension):
            bound.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    read = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return sorted(set(read) - bound)


def test_the_python_api_example_defines_what_it_uses() -> None:
    [block] = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    source = block.replace("await ", "")  # top-level await, as in a notebook cell
    assert _undefined(source) == []


def test_the_check_finds_a_name_nothing_defines() -> None:
    assert _undefined("import a\nx = a.f(search_notes)\n[y for y in x]") == ["search_notes"]
