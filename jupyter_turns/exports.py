"""A package's public names, imported when first read.

``jupyter_turns``, ``jupyter_turns.providers`` and ``jupyter_turns.mcp`` name what they export
in one table (name -> the module that defines it, relative to the package). Importing the
package imports none of those modules: a ``%load_ext`` stays light, and a provider SDK or the
MCP SDK loads only when a name that needs it is read. Each package binds the pair this module
makes as its module ``__getattr__`` and ``__dir__`` (PEP 562); type checkers read the
package's own ``if TYPE_CHECKING:`` imports instead, and tests/unit/test_lazy_exports.py keeps
the two equal.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (its ``__name__``), whose
    ``namespace`` (its ``globals()``) keeps each name once read."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name], package), name)
        namespace[name] = value  # read once: later reads find it in the module
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
