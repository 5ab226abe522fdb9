"""Running code in the user's namespace the way a cell runs, for ``python`` and ``insert_cell``.

:func:`run_code` executes on the kernel's main thread: stdout and stderr are captured, the last
expression's value is kept, an exception is caught (the model reads it; the turn goes on), and
a kernel interrupt raises KeyboardInterrupt in the code, as in a cell. The :class:`CodeRun` it
returns is both what the model reads (:meth:`CodeRun.text`) and what a notebook cell shows
(:meth:`CodeRun.outputs`: nbformat outputs, so an inserted cell reads as if the user ran it).
"""

from __future__ import annotations

import ast
import contextlib
import io
import signal
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..model.content import ImageData
from ..redaction import head

__all__ = ["MAX_OUTPUT", "CodeRun", "run_code"]

MAX_OUTPUT = 20_000
_NOTHING = object()


def _clip(text: str, limit: int = MAX_OUTPUT) -> str:
    """``text`` within ``limit`` characters and a note (cut after its secrets are withheld)."""
    if len(text) <= limit:
        return text
    shown = head(text, limit)
    return f"{shown}\n[output truncated: showing {len(shown):,} of {len(text):,} characters]"


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


@dataclass
class CodeRun:
    """What one run printed, returned and raised, and the images it produced."""

    stdout: str = ""
    stderr: str = ""
    value: Any = _NOTHING  # the last expression's value, when it was not None
    error: tuple[str, str, list[str]] | None = None  # name, message, traceback lines
    images: list[ImageData] = field(default_factory=list)

    @property
    def result(self) -> str | None:
        """The repr of the last expression's value (None when there is none)."""
        if self.value is _NOTHING:
            return None
        try:
            return repr(self.value)
        except Exception as exc:  # a broken __repr__ is the code's business, not an error here
            return f"<repr failed: {type(exc).__name__}: {exc}>"

    def text(self) -> str:
        """What the model reads: stdout, stderr (with an error's traceback), the result."""
        sections = []
        if self.stdout:
            sections.append(f"stdout:\n{self.stdout}")
        stderr = self.stderr + ("".join(self.error[2]) if self.error else "")
        if stderr:
            sections.append(f"stderr:\n{stderr}")
        result = self.result
        if result is not None:
            sections.append(f"result:\n{result}")
        return _clip("\n".join(sections) or "(no output)")

    def outputs(self, *, rich: bool, execution_count: int | None = None) -> list[dict[str, Any]]:
        """The run as nbformat outputs. ``rich``: the result's full display bundle (a
        DataFrame's HTML table) and the images, for a live cell; otherwise text only (the
        images are saved once, on the tool's response) for the record."""
        outputs: list[dict[str, Any]] = []
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text:
                outputs.append({"output_type": "stream", "name": name, "text": _clip(text)})
        if rich:
            for image in self.images:
                data = {image.media_type: image.data, "text/plain": f"<{image.describe()}>"}
                outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
        if self.value is not _NOTHING:
            data = _bundle(self.value) if rich else {"text/plain": _clip(self.result or "")}
            outputs.append(
                {
                    "output_type": "execute_result",
                    "execution_count": execution_count,
                    "data": data,
                    "metadata": {},
                }
            )
        if self.error is not None:
            name, message, lines = self.error
            outputs.append(
                {
                    "output_type": "error",
                    "ename": name,
                    "evalue": message,
                    "traceback": [line.rstrip("\n") for line in lines],
                }
            )
        return outputs


def _bundle(value: Any) -> dict[str, Any]:
    """IPython's display bundle of ``value`` (HTML for a DataFrame), else its repr."""
    with contextlib.suppress(Exception):
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            data, _metadata = shell.display_formatter.format(value)
            if data:
                return {mime: _clip(v) if isinstance(v, str) else v for mime, v in data.items()}
    return {"text/plain": _clip(repr(value))}


def run_code(code: str, namespace: dict[str, Any]) -> CodeRun:
    """Execute ``code`` in ``namespace`` as a cell would (the last expression is its value)."""
    out, err = io.StringIO(), io.StringIO()
    run = CodeRun()
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        message = f"{exc.msg} (line {exc.lineno})"
        run.error = ("SyntaxError", message, [f"SyntaxError: {message}\n"])
        return run
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
                    run.value = value
    except KeyboardInterrupt:
        run.error = ("KeyboardInterrupt", "interrupted by the user", [])
        err.write("KeyboardInterrupt: interrupted by the user\n")
    except Exception as exc:
        # from the code's own frames on (this function's frame is no part of what ran), as a
        # cell's traceback reads; the last three of a deep one
        frames = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        lines = traceback.format_exception(type(exc), exc, frames, limit=-3)
        run.error = (type(exc).__name__, str(exc), lines)
    run.stdout, run.stderr = out.getvalue(), err.getvalue()
    return run
