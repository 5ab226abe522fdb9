"""Route what a running tool prints to its tool card instead of the cell's output.

``sys.stdout`` / ``sys.stderr`` are wrapped once by a transparent proxy; a context variable,
set by the executor around a tool run, says where writes from that run go. Context variables
follow the tool into its task and into ``asyncio.to_thread``, so concurrent tools each capture
their own output while everything else prints as usual.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

__all__ = ["capturing"]

_sink: contextvars.ContextVar[Callable[[str, str], None] | None] = contextvars.ContextVar(
    "jupyter_turns_tool_output", default=None
)
_install_lock = threading.Lock()


class _Proxy:
    """Looks like the wrapped stream; diverts writes while a tool's capture is active."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        sink = _sink.get()
        if sink is None:
            return self._stream.write(text)
        sink(self._name, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _install() -> None:
    with _install_lock:
        if not isinstance(sys.stdout, _Proxy):
            sys.stdout = _Proxy(sys.stdout, "stdout")
        if not isinstance(sys.stderr, _Proxy):
            sys.stderr = _Proxy(sys.stderr, "stderr")


@contextlib.contextmanager
def capturing(write: Callable[[str, str], None]) -> Iterator[None]:
    """While active (and in tasks and threads started inside), prints go to ``write``."""
    _install()
    token = _sink.set(write)
    try:
        yield
    finally:
        _sink.reset(token)
