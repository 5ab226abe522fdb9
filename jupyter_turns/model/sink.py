"""The renderer sink: what the turn tells the display, and the updates it sends besides Parts.

``part()`` is the hot path (every delta, at once); ``update()`` carries everything else: events
appended to the conversation (with the draft blocks they replace), events discarded by Abort,
the turn state, retry waits, tool status and usage. The widget implements this; so do the
recording sink for tests and the printing sink for scripts.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Literal, Protocol, TextIO, TypeAlias

from ..redaction import RedactedStream
from .events import ConversationEvent, MessageDelta, Part, ReasoningDelta, Usage

__all__ = [
    "Appended",
    "Discarded",
    "NullSink",
    "OutputSnapshot",
    "PrintSink",
    "RecordingSink",
    "RetryCleared",
    "Retrying",
    "Sink",
    "StateChanged",
    "SubagentUpdate",
    "ToolUpdate",
    "Update",
    "UsageUpdate",
]


@dataclass(frozen=True, slots=True)
class Appended:
    """Events joined the conversation; ``released`` are the draft block indexes they replace
    (or that end with no event, e.g. a tool call stopped mid-arguments: ``events`` may then be
    empty)."""

    events: tuple[ConversationEvent, ...]
    released: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Discarded:
    """Abort: these events left the conversation and the live draft is dropped."""

    event_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StateChanged:
    """The turn moved to ``state`` (a TurnState value)."""

    state: str


@dataclass(frozen=True, slots=True)
class Retrying:
    attempt: int
    max_attempts: int
    delay: float
    reason: str
    until: float  # wall-clock epoch seconds when the next attempt starts


@dataclass(frozen=True, slots=True)
class RetryCleared:
    pass


ToolState: TypeAlias = Literal[
    "waiting", "running", "done", "error", "cancelled", "skipped", "timeout"
]


@dataclass(frozen=True, slots=True)
class OutputSnapshot:
    """A tool's output so far: ``total`` lines, of which ``head`` and ``tail`` are kept."""

    total: int = 0
    head: tuple[str, ...] = ()
    tail: tuple[str, ...] = ()  # the last lines: the first of them is line ``tail_start``

    @property
    def tail_start(self) -> int:
        return self.total - len(self.tail)

    @property
    def cut(self) -> int:
        """Lines between the head and the tail that are not kept."""
        return self.total - len(self.head) - len(self.tail)

    def runs_from(self, first: int) -> list[tuple[int, list[str]]]:
        """The kept lines numbered ``first`` or later, as runs ``(start, lines)`` of
        consecutive lines (at most two: the rest of the head, the tail)."""
        runs: list[tuple[int, list[str]]] = []
        if first < len(self.head):
            runs.append((first, list(self.head[first:])))
        start = max(first, self.tail_start, len(self.head))
        if start < self.total:
            runs.append((start, list(self.tail[start - self.tail_start :])))
        return runs

    def lines(self) -> list[str]:
        """What to show: the head, a line saying how many were left out, the tail."""
        middle = [f"… {self.cut:,} more lines not shown …"] if self.cut else []
        return [*self.head, *middle, *self.tail]


@dataclass(frozen=True, slots=True)
class ToolUpdate:
    """A tool call's state now: its status and its (bounded) printed and progress output.

    Sent at every status change and, coalesced, when the tool printed or reported progress;
    sinks show what changed (new lines are those numbered past what they already showed).
    """

    call_id: str
    name: str
    status: ToolState
    started_at: float | None = None
    ended_at: float | None = None
    output: OutputSnapshot | None = None


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """The turn's usage and estimated cost so far, and the context gauge: the context in use
    after the last response against the model's window (None: not known)."""

    usage: Usage
    cost_usd: float | None = None
    context_tokens: int | None = None
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class SubagentUpdate:
    """A running sub-agent's usage so far (after each of its cycles), for its card."""

    call_id: str
    cycles: int
    usage: Usage
    cost_usd: float | None = None


Update: TypeAlias = (
    Appended
    | Discarded
    | StateChanged
    | Retrying
    | RetryCleared
    | ToolUpdate
    | UsageUpdate
    | SubagentUpdate
)


class Sink(Protocol):
    def part(self, part: Part) -> None: ...

    def update(self, update: Update) -> None: ...


class NullSink:
    """Shows nothing."""

    def part(self, part: Part) -> None:
        pass

    def update(self, update: Update) -> None:
        pass


@dataclass
class RecordingSink:
    """Keeps everything it is sent, in order, for tests and inspection."""

    parts: list[Part] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    log: list[Part | Update] = field(default_factory=list)

    def part(self, part: Part) -> None:
        self.parts.append(part)
        self.log.append(part)

    def update(self, update: Update) -> None:
        self.updates.append(update)
        self.log.append(update)


class PrintSink:
    """Streams answer text to a terminal and prints one line per tool or status change.

    The text is redacted as it streams (:class:`~jupyter_turns.redaction.RedactedStream`, one
    per block): what may still become a secret is printed once the block ends."""

    def __init__(self, out: TextIO | None = None, *, show_reasoning: bool = True) -> None:
        self._out = out or sys.stdout
        self._show_reasoning = show_reasoning
        self._last: str | None = None
        self._shown_lines: dict[str, int] = {}  # per tool call: output lines printed so far
        self._streams: dict[int, RedactedStream] = {}  # per block: its text, redacted

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def part(self, part: Part) -> None:
        content = part.content
        if isinstance(content, MessageDelta):
            self._switch("message")
            self._write(self._stream(part.index).feed(content.text))
        elif isinstance(content, ReasoningDelta) and self._show_reasoning and content.text:
            self._switch("reasoning")
            self._write(self._stream(part.index).feed(content.text))

    def _stream(self, index: int) -> RedactedStream:
        return self._streams.setdefault(index, RedactedStream())

    def _switch(self, kind: str) -> None:
        if self._last != kind:
            label = "\n[reasoning] " if kind == "reasoning" else "\n[assistant] "
            self._write(label)
            self._last = kind

    def update(self, update: Update) -> None:
        match update:
            case Appended(events=events, released=released):
                for index in released:  # what each finished block held back
                    stream = self._streams.pop(index, None)
                    if stream is not None:
                        self._write(stream.end())
                for event in events:
                    if event.kind in ("chat_request", "notice", "error"):
                        self._line(f"[{event.kind}] {_summary(event)}")
                    elif event.kind == "tool_call_request":
                        self._line(f"[tool call] {event.name}({event.arguments})")
                    elif event.kind == "tool_call_response":
                        flag = " (error)" if event.is_error else ""
                        self._line(f"[tool result{flag}] {event.content[:200]}")
            case ToolUpdate(call_id=call_id, name=name, output=output) if output is not None:
                shown = self._shown_lines.get(call_id, 0)
                for start, lines in output.runs_from(shown):
                    if start > shown:
                        self._line(f"[{name}] … {start - shown:,} more lines not shown …")
                    for line in lines:
                        self._line(f"[{name}] {line}")
                    shown = start + len(lines)
                self._shown_lines[call_id] = max(shown, output.total)
            case Discarded():
                self._streams.clear()
            case Retrying(delay=delay, reason=reason):
                self._line(f"[retry] {reason} — retrying in {delay:.0f} s")
            case _:
                pass

    def _line(self, text: str) -> None:
        self._write(f"\n{text}\n")
        self._last = None


def _summary(event: ConversationEvent) -> str:
    if event.kind == "chat_request":
        return event.content
    if event.kind == "notice":
        return event.text
    if event.kind == "error":
        return event.message
    return event.kind
