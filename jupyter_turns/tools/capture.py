"""Route what a running tool prints or reports, from any thread, to its tool card.

``sys.stdout`` / ``sys.stderr`` are wrapped once by a transparent proxy; a context variable,
set by the executor around a tool run, says where writes from that run go. Context variables
follow the tool into its task and into ``asyncio.to_thread``, so concurrent tools each capture
their own output while everything else prints as usual. :class:`LiveOutput` keeps a call's
lines (bounded) and reports them on the turn's loop, once per turn of it however many lines
arrived meanwhile. :func:`noting` sees what prints as usual (reaches the cell), from any
thread, without changing where it goes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from ..loops import call_soon_on
from .output import ToolOutput

__all__ = ["LiveOutput", "capturing", "noting"]

_sink: contextvars.ContextVar[Callable[[str, str], None] | None] = contextvars.ContextVar(
    "jupyter_turns_tool_output", default=None
)
_install_lock = threading.Lock()
_notes: list[Callable[[str, str], None]] = []  # see `noting`


class _Proxy:
    """Looks like the wrapped stream; diverts writes while a tool's capture is active."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self._stream = stream
        self._name = name

    def write(self, text: str) -> int:
        sink = _sink.get()
        if sink is None:
            if _notes:  # rare: a headless turn's Recorder
                for note in tuple(_notes):
                    note(self._name, text)
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


def noting(note: Callable[[str, str], None]) -> Callable[[], None]:
    """From now on ``note(stream, text)`` sees every write that prints as usual (not what a
    tool's capture diverts), from any thread; the function returned stops it."""
    _install()
    _notes.append(note)

    def stop() -> None:
        with contextlib.suppress(ValueError):
            _notes.remove(note)

    return stop


class LiveOutput:
    """One call's printed and progress lines, written from any thread, reported on the loop."""

    def __init__(self, report: Callable[[], None]) -> None:
        self.output = ToolOutput()  # bounded: head and tail lines, the rest counted
        self._report = report
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._pending = False

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Report on ``loop`` (the loop the run's attempt runs on)."""
        self._loop = loop

    def printed(self, stream: str, text: str) -> None:
        """What the tool printed: finished lines are reported, coalesced."""
        if self.output.write(stream, text):
            self._report_soon()

    def progress(self, text: str) -> None:
        """``ctx.progress()`` or an async generator's ``yield``."""
        self.output.line(text)
        self._report_soon()

    def _report_soon(self) -> None:
        with self._lock:
            if self._pending:
                return
            self._pending = True
        if not call_soon_on(self._loop, self._reported):
            with self._lock:
                self._pending = False

    def _reported(self) -> None:
        with self._lock:
            self._pending = False
        self._report()
