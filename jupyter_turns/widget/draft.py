"""The live draft of one transcript: its unfinished blocks, sent to the page as deltas.

The sink keeps one copy of each unfinished block (what the page is shown of it, and how much
it has been sent): answer text, reasoning, or a tool call's argument text as the model writes
it (kind ``tool_input``, drawn as a draft tool card, its parts naming the tool and the call).
``delta`` messages carry each block's text added since the last flush. Answer text and
reasoning are redacted as they stream (:class:`~jupyter_turns.redaction.RedactedStream`, fed
once per flush: the per-delta path only appends), so no secret the model writes reaches the
page, the widget's state or a live record; what the page has not been shown when the block
becomes its event (redacted whole by the builder) is taken from the event. Should the event
not begin with what the page was shown, the block is not handed over and the page draws the
event from its own text. When blocks become events
(:class:`~jupyter_turns.model.sink.Appended` names their indexes), ``released`` tells the page
which event takes over which block (a tool call's card replaces its draft card), so its DOM is
kept and never parsed again, whatever else is still streaming. The top level has one
:class:`TranscriptDraft`; each running sub-agent has its own, whose messages carry ``parent``
(its call id) so the page draws them inside that call's card.
(Not the engine's :class:`~jupyter_turns.engine.builder.PendingBlock`: that is one block's text
as the turn holds it; this is what the page has been sent of them.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..model.events import (
    ConversationEvent,
    MessageDelta,
    Part,
    ReasoningDelta,
    ToolCall,
    ToolInputDelta,
)
from ..redaction import RedactedStream
from .messages import DraftPart, KernelMessage, TextKind

DraftKind: TypeAlias = TextKind | Literal["tool_input"]
TextPiece: TypeAlias = MessageDelta | ReasoningDelta

__all__ = ["TranscriptDraft"]


@dataclass(slots=True)
class _Block:
    """One unfinished block: the text that arrived since the last look (``chunks``) and what
    the page is shown of it (``shown``, of which the first ``sent`` were sent). Answer text
    and reasoning are shown redacted as they stream; a tool call's argument text (named by
    ``call``: call id, tool name) is shown as it arrives."""

    kind: DraftKind
    chunks: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    sent: int = 0
    call: tuple[str, str] = ("", "")
    stream: RedactedStream | None = None  # None: shown as it arrives (a call's arguments)
    ended: bool = False
    fed: int = 0  # characters that went through the stream

    def part(self, index: int, text: str) -> DraftPart:
        """The page's part of this block at ``index`` carrying ``text``."""
        if self.kind == "tool_input":
            return (index, "tool_input", text, self.call[1], self.call[0])
        return (index, self.kind, text)

    def unsent(self) -> str | None:
        """The text the page has not been sent yet (now counted as sent), or None."""
        self._take()
        if self.sent == len(self.shown):
            return None
        text = "".join(self.shown[self.sent :])
        self.shown[self.sent :] = [text]
        self.sent = len(self.shown)
        return text  # empty when all of it is held back: the block opens on the page

    def becomes(self, text: str) -> bool:
        """Whether the event text ``text`` (the whole block, redacted by the builder) is what
        this block shows and then some: nothing of it differs from what the page has."""
        return (self.fed + sum(map(len, self.chunks)) == 0) == (not text) and text.startswith(
            "".join(self.shown)
        )

    def end(self, text: str) -> None:
        """The block became the event ``text`` (:meth:`becomes`): the page is shown the rest
        of it, taken from the event (redacted whole: nothing to scan again here)."""
        self.shown.append(text[len("".join(self.shown)) :])
        self.chunks.clear()
        self.ended = True

    def text(self) -> str:
        """What the page is shown of this block (sent or about to be)."""
        self._take()
        if self.sent > 1:  # what the page has, joined once into one piece
            self.shown[: self.sent] = ["".join(self.shown[: self.sent])]
            self.sent = 1
        return "".join(self.shown)

    def _take(self) -> None:
        """What arrived goes through the stream once (per flush, not per delta)."""
        if not self.chunks or self.ended:
            return
        text = "".join(self.chunks)
        self.chunks.clear()
        self.fed += len(text)
        self.shown.append(text if self.stream is None else self.stream.feed(text))


class TranscriptDraft:
    """Unfinished blocks by index, and the handovers to send with the next flush."""

    def __init__(self, send: Callable[[KernelMessage], None]) -> None:
        self._send = send
        self._blocks: dict[int, _Block] = {}
        self._released: list[tuple[int, _Block, str | None]] = []  # (index, block, event id)

    def part(self, part: Part) -> bool:
        """Add a piece of text or of a call's arguments; whether it was one (the complete call
        shows once it is an event)."""
        content = part.content
        if isinstance(content, ToolCall):
            return False
        block = self._blocks.get(part.index)
        if block is None:
            self._blocks[part.index] = _new_block(content)
        else:
            block.chunks.append(content.text)
        return True

    def clear(self) -> None:
        self._blocks = {}
        self._released = []

    def discard(self) -> None:
        """Abort dropped the draft: forget it, and tell the page (``draft_clear``)."""
        self.clear()
        self._send({"type": "draft_clear"})

    @property
    def empty(self) -> bool:
        return not self._blocks

    def send(self) -> None:
        """``delta`` with the new text of every block, then ``released`` for the blocks that
        became events. A block at the index of one released before it (the next cycle's
        block 0) starts a new ``delta`` after that ``released``, so the texts never mix."""
        released, self._released = self._released, []
        parts: list[DraftPart] = []
        handed: dict[int, str | None] = {}
        live = [(index, block, False, None) for index, block in self._blocks.items()]
        for index, block, done, event in [*((i, b, True, e) for i, b, e in released), *live]:
            if index in handed:
                self._segment(parts, handed)
                parts, handed = [], {}
            text = block.unsent()
            if text is not None:
                parts.append(block.part(index, text))
            if done:
                handed[index] = event
        self._segment(parts, handed)

    def _segment(self, parts: list[DraftPart], handed: dict[int, str | None]) -> None:
        if parts:
            self._send({"type": "delta", "parts": parts})
        if handed:
            self._send({"type": "released", "blocks": list(handed.items())})

    def live_drafts(self) -> list[DraftPart]:
        """The draft blocks that no event has replaced yet, in index order (what the page
        shows or is about to; what a crash would lose)."""
        return [self._blocks[i].part(i, self._blocks[i].text()) for i in sorted(self._blocks)]

    def release(self, events: Sequence[ConversationEvent], indexes: Sequence[int]) -> None:
        """Take the released blocks out of the draft, each with the event that replaces it.

        The text events and tool calls, in order, replace the released blocks in index order:
        each takes the next block of its kind and length, a call the draft card of its call id
        (a block with no event, e.g. an empty one cut short or a call stopped mid-arguments, is
        dropped). Both are copies of the same parts, so they agree; an event that finds no
        block is drawn from its content instead.
        """
        blocks = [(i, self._blocks.pop(i)) for i in sorted(indexes) if i in self._blocks]
        position = 0
        for event in events:
            for k in range(position, len(blocks)):
                index, block = blocks[k]
                if _replaces(event, block):
                    if event.kind == "message" or event.kind == "reasoning":
                        block.end(event.content)
                    self._released.extend((i, b, None) for i, b in blocks[position:k])
                    self._released.append((index, block, event.id))
                    position = k + 1
                    break
        self._released.extend((i, b, None) for i, b in blocks[position:])


def _replaces(event: ConversationEvent, block: _Block) -> bool:
    """Whether ``event`` is what ``block`` became: the same call, or text that begins with
    what the block showed (a block that showed anything else is dropped, and the event drawn
    from its own text: the page never keeps what differs from what is saved)."""
    if event.kind == "tool_call_request":
        return block.kind == "tool_input" and block.call[0] == event.call_id
    if event.kind == "message" or event.kind == "reasoning":
        return block.kind == event.kind and block.becomes(event.content)
    return False


def _new_block(content: ToolInputDelta | TextPiece) -> _Block:
    if isinstance(content, ToolInputDelta):
        return _Block("tool_input", [content.text], call=(content.call_id, content.name))
    return _Block(content.kind, [content.text], stream=RedactedStream())
