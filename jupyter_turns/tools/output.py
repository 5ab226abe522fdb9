"""ToolOutput: what a running tool prints or reports as progress, kept to a bounded size.

Lines are numbered from 0 in arrival order. The first ``head`` lines and the last ``tail``
lines are kept, each cut to ``line_chars`` characters with a note of what was cut; the lines
between are only counted. So a tool that prints 10 MB, or 100,000 lines, costs at most about
``(head + tail) * line_chars`` characters wherever its output is shown or saved. Writes may come
from any thread (a plain tool runs in a worker thread); :meth:`ToolOutput.snapshot` is the
immutable state that sinks receive (:class:`~jupyter_turns.model.sink.OutputSnapshot`, in the
model beside the update that carries it).

What it shows has its secrets withheld (:mod:`jupyter_turns.redaction`): the tool card is on
screen and the widget's state may be saved with the notebook. A line is redacted once, when it
is first kept in a snapshot, so a tool printing 100,000 lines pays for at most the lines kept;
a long line is cut after it is redacted (:func:`~jupyter_turns.redaction.head`: a line keeps
``line_chars`` plus :data:`~jupyter_turns.redaction.SPAN` characters until then), so a secret
across the cut is never shown in part; a private key printed line by line is followed across
lines (:class:`KeyBlocks`).
"""

from __future__ import annotations

import threading
from collections import deque

from ..model.sink import OutputSnapshot
from ..redaction import SPAN, KeyBlocks, head

__all__ = ["ToolOutput"]

HEAD_LINES = 10
TAIL_LINES = 40
LINE_CHARS = 1_000


class _Line:
    """One unfinished line of one stream: its first ``limit`` characters and a count of the rest."""

    __slots__ = ("dropped", "kept", "length")

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.length = 0
        self.dropped = 0

    def add(self, text: str, start: int, end: int, limit: int) -> None:
        room = limit - self.length
        if room > 0:
            piece = text[start : min(end, start + room)]
            self.kept.append(piece)
            self.length += len(piece)
        self.dropped += max(0, end - start - max(room, 0))

    def take(self) -> tuple[str, int]:
        text, dropped = "".join(self.kept), self.dropped
        self.kept, self.length, self.dropped = [], 0, 0
        return text, dropped


class _Kept:
    """A line as it arrived (its first ``limit + SPAN`` characters, and how many more there
    were), redacted and cut to ``limit`` when a snapshot first shows it (most tail lines are
    dropped unseen)."""

    __slots__ = ("clean", "dropped", "limit", "prefix", "text")

    def __init__(self, prefix: str, text: str, dropped: int, limit: int) -> None:
        self.prefix, self.text, self.dropped, self.limit = prefix, text, dropped, limit
        self.clean = False

    def shown(self) -> str:
        if not self.clean:
            text = head(self.text, self.limit)
            more = self.dropped + max(0, len(self.text) - self.limit)
            if more:
                text = f"{text}… [{more:,} more characters]"
            self.text, self.clean = self.prefix + text, True
        return self.text


class ToolOutput:
    """The bounded output of one tool call; thread-safe."""

    def __init__(
        self, *, head: int = HEAD_LINES, tail: int = TAIL_LINES, line_chars: int = LINE_CHARS
    ) -> None:
        self.head_max = head
        self.line_chars = line_chars
        self._head: list[str] = []
        self._tail: deque[_Kept] = deque(maxlen=tail)
        self._total = 0
        self._open: dict[str, _Line] = {}  # unfinished lines by stream
        self._keys: dict[str, KeyBlocks] = {}  # private key blocks, by stream
        self._lock = threading.Lock()

    def write(self, stream: str, text: str) -> bool:
        """Printed text (``stream`` is ``stdout`` or ``stderr``); whether a line was finished."""
        prefix = "[stderr] " if stream == "stderr" else ""
        with self._lock:
            line = self._open.get(stream)
            if line is None:
                line = self._open[stream] = _Line()
            start, finished, room = 0, False, self.line_chars + SPAN
            while (newline := text.find("\n", start)) >= 0:
                line.add(text, start, newline, room)
                self._add(prefix, *line.take())
                start, finished = newline + 1, True
            if start < len(text):
                line.add(text, start, len(text), room)
            return finished

    def line(self, text: str) -> None:
        """A progress line (``ctx.progress``, an async generator's ``yield``)."""
        with self._lock:
            room = self.line_chars + SPAN
            for part in text.split("\n"):
                self._add("", part[:room], max(0, len(part) - room))

    def finish(self) -> None:
        """The tool ended: unfinished printed lines become lines."""
        with self._lock:
            for stream, line in self._open.items():
                if line.length or line.dropped:
                    self._add("[stderr] " if stream == "stderr" else "", *line.take())

    def _add(self, prefix: str, text: str, dropped: int) -> None:
        text = self._keys.setdefault(prefix, KeyBlocks()).line(text)
        kept = _Kept(prefix, text, dropped, self.line_chars)
        if len(self._head) < self.head_max:
            self._head.append(kept.shown())
        else:
            self._tail.append(kept)
        self._total += 1

    def snapshot(self) -> OutputSnapshot:
        with self._lock:
            tail = tuple(line.shown() for line in self._tail)
            return OutputSnapshot(self._total, tuple(self._head), tail)
