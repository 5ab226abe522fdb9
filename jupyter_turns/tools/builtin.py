"""Built-in kernel tools: the read-only notebook tools (offered by default) and ``python``.

The registry :data:`BUILTINS` names them all; :data:`READ_ONLY` is the default set
(``ChatMagics.builtins``); ``--builtins`` adds to a thread's set, ``none`` clears it.

``python`` runs code in the user's namespace on the kernel's main thread, like a cell: it is
``ask`` by default, captures stdout, stderr and the last expression's repr, and truncates huge
output. While it runs, a kernel interrupt raises KeyboardInterrupt in the code, as in a cell.
``inspect`` is read-only: a short summary of one variable.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from ..content import labeled
from ..reading.sources import NotebookReader
from ..reading.tools import cell_output_tool, notebook_cells_tool, variables_tool
from ..reading.variables import summarize
from .context import ToolContext
from .figures import produced_images
from .registry import Tool, tool
from .results import ToolResult
from .state_diff import diff, snapshot, undo_log

__all__ = [
    "BUILTINS",
    "READ_ONLY",
    "default_builtins",
    "inspect_tool",
    "parse_builtins",
    "python_tool",
]

MAX_OUTPUT = 20_000


def _clip(text: str, limit: int = MAX_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[output truncated: showing {limit:,} of {len(text):,} characters]"


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Let SIGINT raise KeyboardInterrupt in the running code (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_code(code: str, namespace: dict[str, Any]) -> str:
    """Execute ``code`` in ``namespace``; stdout, stderr and the last expression's repr."""
    out, err = io.StringIO(), io.StringIO()
    result = None
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    last = None
    tail = tree.body[-1] if tree.body else None
    if isinstance(tail, ast.Expr):
        last = ast.Expression(tail.value)
        tree.body.pop()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _interruptible():
            exec(compile(tree, "<python tool>", "exec"), namespace)
            if last is not None:
                value = eval(compile(last, "<python tool>", "eval"), namespace)
                if value is not None:
                    result = repr(value)
    except KeyboardInterrupt:
        err.write("KeyboardInterrupt: interrupted by the user\n")
    except Exception:
        err.write(traceback.format_exc(limit=-3))
    sections = []
    if out.getvalue():
        sections.append(f"stdout:\n{out.getvalue()}")
    if err.getvalue():
        sections.append(f"stderr:\n{err.getvalue()}")
    if result is not None:
        sections.append(f"result:\n{result}")
    return _clip("\n".join(sections) or "(no output)")


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
        space = namespace()
        before, previous = snapshot(space), dict(space)
        with produced_images() as images:
            text = run_code(code, space)
        state = diff(before, space)
        undo_log(space).record(ctx.call_id, previous, state)
        framed = labeled(text, "python run output")  # it prints notebook data
        if not state:
            return ToolResult(framed, images)
        return ToolResult(f"{framed}\n\n{state.text()}", images, extra={"state": state.as_dict()})

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


BUILTINS: dict[str, Callable[[NotebookReader], Tool]] = {
    "notebook_cells": notebook_cells_tool,
    "cell_output": cell_output_tool,
    "variables": variables_tool,
    "inspect": _inspect,
    "python": _python,
}
READ_ONLY = ("notebook_cells", "cell_output", "variables", "inspect")  # offered by default


def parse_builtins(text: str) -> tuple[bool, set[str]]:
    """``(clear, names)`` of a ``--builtins`` value: ``none`` clears, ``default`` stands for
    the read-only tools; raises ValueError naming what is unknown."""
    names = {n.strip() for n in text.split(",") if n.strip()}
    clear = "none" in names
    if "default" in names:
        names |= set(READ_ONLY)
    names -= {"none", "default"}
    unknown = names - set(BUILTINS)
    if unknown:
        known = ", ".join([*BUILTINS, "default", "none"])
        raise ValueError(f"unknown {', '.join(sorted(unknown))} (built-in tools: {known})")
    return clear, names


def default_builtins(text: str) -> set[str]:
    """The built-ins a new thread gets from ``ChatMagics.builtins`` (unknown names left out:
    a bad setting is reported when a cell uses it)."""
    try:
        return parse_builtins(text)[1]
    except ValueError:
        return set(READ_ONLY) & {n.strip() for n in text.split(",")}
