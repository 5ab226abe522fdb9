"""EventBuilder: turns a cycle's Parts and Flushes into conversation events. Sync, no I/O.

One buffer per block index. Text parts append to a list of chunks (joined once, at flush, so n
parts cost O(total size)); a tool call is a single part, which pieces of its argument text
(:class:`~jupyter_turns.model.events.ToolInputDelta`) may precede: they open the block (so Stop
knows a draft card is showing) but are kept by the page's draft only, never turned into events.
Block indexes count up from 0 (or from a seeded block): a flushed block is released as an event
only once every lower index has been released, so events come out in index order whatever order
the flushes arrive in; whatever is still held at the end is drained in index order. Unflushed
text stays readable for Stop and Continue.

The model's text is redacted (:func:`jupyter_turns.redaction.redact`) where a block becomes its
event, before it is recorded, saved or sent back: an answer that reassembles a key the model
read in pieces holds ``[redacted: API key]`` instead. Reasoning that had a secret withheld
loses its signature (it no longer is the text that was signed), so it is kept but not sent
back; ``metadata.redacted`` counts what was withheld. The page's draft redacts the same text
as it streams (:class:`~jupyter_turns.redaction.RedactedStream`), so both agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ProtocolError
from ..model.events import (
    Block,
    ConversationEvent,
    Flush,
    Message,
    Part,
    Reasoning,
    ToolCall,
    ToolCallRequest,
    ToolInputDelta,
)
from ..redaction import redact

__all__ = ["EventBuilder", "PendingBlock"]

BlockKind = Literal["message", "reasoning", "tool_call", "opaque"]
PendingKind = Literal["message", "reasoning", "tool_call"]


@dataclass(slots=True)
class _Buffer:
    kind: BlockKind
    chunks: list[str] = field(default_factory=list)
    call: ToolCall | None = None
    metadata: dict[str, Any] | None = None  # set when flushed

    def text(self) -> str:
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""


@dataclass(frozen=True, slots=True)
class PendingBlock:
    """A block that has not become an event yet: its index, kind and text so far, redacted as
    its event will be (a tool call's is empty: its argument pieces are the page's alone)."""

    index: int
    kind: PendingKind
    text: str


class EventBuilder:
    """Accumulates one cycle; :meth:`flush` returns the events it releases, in index order."""

    def __init__(self) -> None:
        self._buffers: dict[int, _Buffer] = {}
        self._released: set[int] = set()
        self._next = 0  # the lowest index not released yet

    @property
    def empty(self) -> bool:
        """True if no part has arrived (or every block was already released)."""
        return not self._buffers

    def seed(self, index: int, text: str) -> None:
        """Open message block ``index`` with ``text`` (the partial answer a Continue extends)."""
        if index in self._buffers or index in self._released:
            raise ProtocolError(f"cannot seed block {index}: it is already open")
        self._buffers[index] = _Buffer("message", [text] if text else [])
        if not self._released:
            self._next = index

    def add(self, part: Part) -> None:
        content = part.content
        buffer = self._buffers.get(part.index)
        if buffer is None:
            if part.index in self._released or part.index < self._next:
                raise ProtocolError(f"part for block {part.index} after it was flushed")
            buffer = self._buffers[part.index] = _Buffer(content.kind)
        elif buffer.metadata is not None:
            raise ProtocolError(f"part for block {part.index} after it was flushed")
        elif buffer.kind != content.kind:
            raise ProtocolError(
                f"block {part.index} is {buffer.kind}, got a {content.kind} part for it"
            )
        if isinstance(content, ToolCall):
            if buffer.call is not None:
                raise ProtocolError(f"block {part.index} got a second tool call")
            buffer.call = content
        elif isinstance(content, ToolInputDelta):
            if buffer.call is not None:
                raise ProtocolError(f"block {part.index} got arguments after its tool call")
        else:
            buffer.chunks.append(content.text)

    def flush(self, flush: Flush) -> list[tuple[int, ConversationEvent]]:
        """Complete block ``flush.index``; returns the (index, event) pairs now released."""
        buffer = self._buffers.get(flush.index)
        if buffer is None:
            if flush.index in self._released or flush.index < self._next:
                raise ProtocolError(f"block {flush.index} flushed twice")
            if not flush.metadata:
                return []  # an empty block with nothing to keep
            self._buffers[flush.index] = _Buffer("opaque", metadata=dict(flush.metadata))
        elif buffer.metadata is not None:
            raise ProtocolError(f"block {flush.index} flushed twice")
        elif buffer.kind == "tool_call" and buffer.call is None:
            raise ProtocolError(f"block {flush.index} flushed without its complete tool call")
        else:
            buffer.metadata = dict(flush.metadata)
        return self._release()

    def drafts(self) -> list[PendingBlock]:
        """Unreleased blocks in index order (flushed ones waiting for a lower block included);
        a tool call's block too, with no text: the page may be drawing its arguments."""
        out = []
        for index in sorted(self._buffers):
            buffer = self._buffers[index]
            if buffer.kind == "message" or buffer.kind == "reasoning":
                out.append(PendingBlock(index, buffer.kind, redact(buffer.text()).text))
            elif buffer.kind == "tool_call":
                out.append(PendingBlock(index, "tool_call", ""))
        return out

    def drain(self) -> list[ConversationEvent]:
        """Everything still held, as events in index order; unflushed text is marked partial.

        Used when the user stops a stream: flushed blocks keep their metadata, unflushed text
        blocks become events with ``metadata.partial`` set, and an unflushed tool call is dropped
        (it was never complete).
        """
        events: list[ConversationEvent] = []
        for index in sorted(self._buffers):
            buffer = self._buffers.pop(index)
            self._released.add(index)
            self._next = max(self._next, index + 1)
            if buffer.metadata is None:
                if buffer.kind in ("tool_call", "opaque") or not buffer.text():
                    continue
                buffer.metadata = {"partial": True}
            events.append(_to_event(buffer))
        return events

    def _release(self) -> list[tuple[int, ConversationEvent]]:
        events: list[tuple[int, ConversationEvent]] = []
        while (buffer := self._buffers.get(self._next)) is not None and buffer.metadata is not None:
            del self._buffers[self._next]
            self._released.add(self._next)
            events.append((self._next, _to_event(buffer)))
            self._next += 1
        return events


def _to_event(buffer: _Buffer) -> ConversationEvent:
    metadata = buffer.metadata or {}
    if buffer.kind == "tool_call":
        call = buffer.call
        assert call is not None
        extra = dict(metadata)
        if call.parse_error is not None:
            extra["parse_error"] = call.parse_error
            extra["raw_arguments"] = call.raw_arguments
        return ToolCallRequest(
            call_id=call.call_id, name=call.name, arguments=call.arguments, metadata=extra
        )
    if buffer.kind == "opaque":
        return Block(metadata=metadata)
    text, found = redact(buffer.text())
    if found:
        metadata = {**metadata, "redacted": found}
    if buffer.kind == "reasoning":
        if found:  # signed over the text as written: never sent back with another text
            metadata.pop("signature", None)
        return Reasoning(content=text, metadata=metadata)
    return Message(content=text, metadata=metadata)
