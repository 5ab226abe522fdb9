"""Built-in kernel tools: the notebook tools (offered by default) and ``python``.

The registry :data:`BUILTINS` makes each tool named in :mod:`.builtin_names`; :data:`DEFAULT` is
the default set (``ChatMagics.builtins``): the read-only ones (:data:`READ_ONLY`, which never
ask) and the cell tools (:data:`CELL_TOOLS`: insert, edit, run, delete and move a cell;
:mod:`jupyter_turns.editing`, which always ask).
``--builtins`` adds to a thread's set, ``none`` clears it. A tool the notebook defines under
a built-in's name is the one offered: the built-in steps aside (kernel/threads.py
``namespace_tools``; docs/tools.md). Each built-in is marked ``Tool.builtin``.

``python`` runs code in the user's namespace on the kernel's main thread, like a cell: it is
``ask`` by default, captures stdout, stderr and the last expression's repr, and truncates huge
output; code that raises gives an error result (what it printed, the traceback). While it runs,
a kernel interrupt raises KeyboardInterrupt in the code, as in a cell.
``inspect`` is read-only: a short summary of one variable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..editing.cell_steps import delete_cell_tool, move_cell_tool, run_cell_tool
from ..editing.cell_tools import edit_cell_tool, insert_cell_tool
from ..editing.undo import run_step
from ..model.content import labeled
from ..reading.notebook_tools import cell_output_tool, notebook_cells_tool, variables_tool
from ..reading.sources import NotebookReader
from ..reading.variables import summarize
from ..tools.context import ToolContext
from ..tools.registry import Tool, tool
from ..tools.results import ResponseFields, ToolResult
from .builtin_names import CELL_TOOLS, DEFAULT, READ_ONLY, default_builtins, parse_builtins

__all__ = [
    "BUILTINS",
    "CELL_TOOLS",
    "DEFAULT",
    "READ_ONLY",
    "default_builtins",
    "inspect_tool",
    "parse_builtins",
    "python_tool",
]


def python_tool(namespace: Callable[[], dict[str, Any]]) -> Tool:
    @tool(name="python", run="ask", sequential=True, always_ask=True)
    async def python(code: str, ctx: ToolContext) -> ToolResult:
        """Run Python code in the user's notebook kernel and namespace.

        Variables you define stay available to the user and to later calls. Returns stdout,
        stderr, the repr of the last expression, the figures and images the code produced
        (you see them), and what the code changed in the namespace.

        Args:
            code: Python source to execute.
        """
        run, state = run_step(code, namespace(), ctx.call_id, "python")
        images, failed = run.images, run.error is not None  # the code raised: an error result
        framed = labeled(run.text(), "python run output")  # it prints notebook data
        fields = ResponseFields(outputs=run.outputs(rich=False))  # "Add to notebook"
        if not state:
            return ToolResult(framed, images, fields, is_error=failed)
        fields.state = state.as_dict()
        return ToolResult(f"{framed}\n\n{state.text()}", images, fields, is_error=failed)

    return python


def inspect_tool(namespace: Callable[[], dict[str, Any]]) -> Tool:
    @tool(name="inspect", run="unattended")
    def inspect(name: str) -> str:
        """Describe a variable of the user's notebook without changing it.

        Gives its type, shape, dtype, columns and first rows of a DataFrame, and length.

        Args:
            name: Variable name, optionally with attributes (``df`` or ``model.weights``).
        """
        head, *attributes = name.split(".")
        space = namespace()
        if head not in space:
            visible = sorted(k for k in space if not k.startswith("_"))[:40]
            return f"No variable named {head!r}. Some that exist: {', '.join(visible)}"
        value = space[head]
        for attribute in attributes:
            value = getattr(value, attribute)
        return labeled(summarize(value), f"variable {name}")

    return inspect


def _python(reader: NotebookReader) -> Tool:
    return dataclasses.replace(python_tool(lambda: reader.namespace), reads_notebook=True)


def _inspect(reader: NotebookReader) -> Tool:
    return dataclasses.replace(inspect_tool(lambda: reader.namespace), reads_notebook=True)


def _builtin(make: Callable[[NotebookReader], Tool]) -> Callable[[NotebookReader], Tool]:
    """``make``, its tool marked as the kernel's own (``Tool.builtin``): what tells the page
    to draw its approval with the built-in's form, where a notebook tool of the same name gets
    the form that shows every argument."""
    return lambda reader: dataclasses.replace(make(reader), builtin=True)


BUILTINS: dict[str, Callable[[NotebookReader], Tool]] = {
    name: _builtin(make)
    for name, make in {
        "notebook_cells": notebook_cells_tool,
        "cell_output": cell_output_tool,
        "variables": variables_tool,
        "inspect": _inspect,
        "insert_cell": insert_cell_tool,
        "edit_cell": edit_cell_tool,
        "run_cell": run_cell_tool,
        "delete_cell": delete_cell_tool,
        "move_cell": move_cell_tool,
        "python": _python,
    }.items()
}
