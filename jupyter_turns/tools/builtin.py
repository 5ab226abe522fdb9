"""Built-in kernel tools, off unless a thread enables them: ``python`` and ``inspect``.

``python`` runs code in the user's namespace on the kernel's main thread, like a cell: it is
``ask`` by default, captures stdout, stderr and the last expression's repr, and truncates huge
output. While it runs, a kernel interrupt raises KeyboardInterrupt in the code, as in a cell.
``inspect`` is read-only: a short summary of one variable.
"""

from __future__ import annotations

import ast
import contextlib
import io
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from .registry import Tool, tool

__all__ = ["BUILTINS", "inspect_tool", "python_tool"]

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
    async def python(code: str) -> str:
        """Run Python code in the user's notebook kernel and namespace.

        Variables you define stay available to the user and to later calls. Returns stdout,
        stderr and the repr of the last expression.

        Args:
            code: Python source to execute.
        """
        return run_code(code, namespace())

    return python


def summarize(value: Any, limit: int = 4_000) -> str:
    """A short, read-only description of ``value``."""
    lines = [f"type: {type(value).__module__}.{type(value).__qualname__}"]
    shape = getattr(value, "shape", None)
    if shape is not None:
        lines.append(f"shape: {tuple(shape) if not isinstance(shape, str) else shape}")
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        lines.append(f"dtype: {dtype}")
    columns = getattr(value, "columns", None)
    dtypes = getattr(value, "dtypes", None)
    if columns is not None:
        try:
            if dtypes is not None and hasattr(dtypes, "items"):
                described = ", ".join(f"{c}: {t}" for c, t in dtypes.items())
            else:
                described = ", ".join(map(str, columns))
            lines.append(f"columns: {described}")
        except Exception as exc:  # a broken __iter__ must not break the tool
            lines.append(f"columns: (unreadable: {exc})")
    if not isinstance(value, str | bytes) and hasattr(value, "__len__"):
        with contextlib.suppress(Exception):
            lines.append(f"length: {len(value)}")
    head = getattr(value, "head", None)
    if callable(head) and columns is not None:
        try:
            lines.append(f"head:\n{head()}")
        except Exception as exc:
            lines.append(f"head: (unreadable: {exc})")
    else:
        lines.append(f"repr: {_clip(repr(value), 1_000)}")
    return _clip("\n".join(lines), limit)


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
        return summarize(value)

    return inspect


BUILTINS: dict[str, Callable[[Callable[[], dict[str, Any]]], Tool]] = {
    "python": python_tool,
    "inspect": inspect_tool,
}
