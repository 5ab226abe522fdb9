"""No function in the package is over 60 lines (issue 25), counting a def from its first line
to its last, nested defs inside it included: a long function is several steps that want names."""

from __future__ import annotations

import ast
from pathlib import Path

import jupyter_turns

ROOT = Path(jupyter_turns.__file__).parent
LIMIT = 60


def _long_functions(root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LIMIT:
                    where = path.relative_to(root.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_is_over_60_lines() -> None:
    assert _long_functions() == []


def test_the_count_names_a_long_function(tmp_path: Path) -> None:
    """The counter itself: a 61-line def (a nested def inside it) is named, a 60-line one is not
    (so the empty answer above means something)."""
    lines = "\n".join(f"        x{i} = {i}" for i in range(56))
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text(
        f"def short() -> None:\n    pass\n\n\ndef outer() -> None:\n    def inner() -> None:\n"
        f"{lines}\n        return None\n\n    inner()\n"
    )
    assert _long_functions(package) == ["pkg/m.py:5 outer (61 lines)"]
