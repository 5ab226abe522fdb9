"""The packages that export names lazily (issue 43): the root, ``providers`` and ``mcp``.

Each imports its public names when first read (PEP 562), from the module its ``_HOMES`` table
names; the imports under ``TYPE_CHECKING`` are what mypy and editors see. Both must say the
same, and ``__all__`` must name each. In a fresh process, ``import jupyter_turns`` and
``%load_ext jupyter_turns`` on a real InteractiveShell import none of the heavy libraries of
tests/bench/b13_cold_start.py, while every public name still resolves to its home's object.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import jupyter_turns
import jupyter_turns.mcp
import jupyter_turns.providers
from tests.bench.b13_cold_start import HEAVY

PACKAGES = [jupyter_turns, jupyter_turns.providers, jupyter_turns.mcp]
ROOT_ONLY = {"__version__", "load_ipython_extension"}  # defined in the root itself


def _type_checking_imports(package: ModuleType) -> dict[str, str]:
    """name -> module (relative, as written) of the imports under ``if TYPE_CHECKING:``."""
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                module = "." * statement.level + (statement.module or "")
                found.update({alias.name: module for alias in statement.names})
    return found


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_the_lazy_table_says_what_the_type_checking_imports_say(package: ModuleType) -> None:
    homes = package._HOMES
    assert homes == _type_checking_imports(package)
    assert sorted(set(package.__all__) - ROOT_ONLY) == sorted(homes)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_each_public_name_is_its_homes_object(package: ModuleType) -> None:
    for name, home in package._HOMES.items():
        module = importlib.import_module(home, package.__name__)
        assert getattr(package, name) is getattr(module, name), name
    assert set(package._HOMES) <= set(dir(package))
    with pytest.raises(AttributeError, match="has no attribute 'Chta'"):
        package.Chta  # noqa: B018


_LOAD = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
before = set(sys.modules)
import jupyter_turns
imported = sorted(m for m in set(sys.modules) - before if m.startswith("jupyter_turns."))
jupyter_turns.load_ipython_extension(shell)
tops = sorted({m.split(".")[0] for m in set(sys.modules) - before})
from jupyter_turns import Chat, tool
print(json.dumps({"imported": imported, "tops": tops, "chat": Chat.__module__}))
"""


def test_loading_the_extension_imports_no_heavy_library() -> None:
    """In a fresh process: ``import jupyter_turns`` imports none of its submodules but the
    stdlib-only helper that defers the others (jupyter_turns/exports.py), and
    ``load_ipython_extension`` on a real shell none of the HEAVY libraries; ``from
    jupyter_turns import Chat, tool`` still works."""
    done = subprocess.run(
        [sys.executable, "-c", _LOAD], capture_output=True, text=True, check=True, timeout=120
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["imported"] == ["jupyter_turns.exports"]
    assert sorted(set(got["tops"]) & set(HEAVY)) == []
    assert got["chat"] == "jupyter_turns.engine.chat"
