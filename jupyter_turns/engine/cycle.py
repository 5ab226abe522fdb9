"""CycleReader: one streamed response, from the provider's stream to conversation events.

Every Part goes to the renderer sink at once and to the EventBuilder; a flushed block becomes
its event and joins the conversation with the index of the draft it releases. The reader knows
where the cycle began, so an Abort can drop exactly this cycle and a Stop or Continue can keep
what arrived. A continuation (the model asked to go on from a partial answer) maps its block
indexes onto the draft it continues (:class:`IndexMap`), so the answer grows in one block.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

from ..errors import ProtocolError, ProviderError, StreamBroken
from ..model.conversation import Conversation
from ..model.events import (
    ConversationEvent,
    Finished,
    Flush,
    Message,
    MessageDelta,
    Notice,
    Part,
    StreamEvent,
)
from ..model.sink import Discarded, Sink
from .builder import EventBuilder
from .compaction import unavailable_notice
from .turn_state import Broken, CycleEnd, Done, Failed

__all__ = ["CycleReader", "IndexMap"]

Append = Callable[..., None]  # TurnCoordinator._append(*events, released=...)


class CycleReader:
    def __init__(self, conversation: Conversation, sink: Sink, append: Append) -> None:
        self.conversation = conversation
        self.sink = sink
        self._append = append
        self.start = len(conversation)  # where this cycle's events begin
        self.builder = EventBuilder()
        self.gate = asyncio.Event()  # cleared while the interrupt menu is open
        self._index_map: IndexMap | None = None

    def begin(self, *, continuing: bool) -> None:
        """A new cycle; a continuation keeps the start, the builder and its index map."""
        if not continuing:
            self.start = len(self.conversation)
            self.builder = EventBuilder()
            self._index_map = None
        self.gate.set()

    async def pump(self, stream: AsyncIterator[StreamEvent]) -> Finished:
        gate, sink, builder = self.gate, self.sink, self.builder
        index_map = self._index_map
        try:
            while True:  # ResilientCycle's stream ends with Finished, or raises
                item = await anext(stream)
                if not gate.is_set():
                    await gate.wait()
                if item.kind == "part":
                    if index_map is not None:
                        item = index_map.part(item)
                    sink.part(item)
                    builder.add(item)
                elif item.kind == "flush":
                    if index_map is not None:
                        item = index_map.flush(item)
                    released = builder.flush(item)
                    if released:
                        self._append(*(e for _, e in released), released=[i for i, _ in released])
                else:
                    return item
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def end(self, pump: asyncio.Task[Finished]) -> CycleEnd:
        """How the finished pump ended: complete, broken (something was shown) or failed."""
        error = pump.exception()
        if error is None:
            finished = pump.result()
            released = [draft.index for draft in self.builder.drafts()]
            self._append(*self.builder.drain(), released=released)
            for notice in finished.details.get("notices") or ():  # e.g. "does not stream"
                self._append(Notice(level="warning", text=str(notice)))
            refused = finished.details.get("compaction_refused")  # the provider's reason
            if refused is not None:
                self._append(unavailable_notice(str(refused)))
            unknown = finished.details.get("unknown_events")
            if unknown:
                types = ", ".join(sorted({str(_type_of(e)) for e in unknown}))
                text = f"The API sent {len(unknown)} event(s) this version does not know: {types}."
                self._append(Notice(text=text, data=unknown))
            return Done(finished)
        if isinstance(error, StreamBroken):
            return Broken(error)
        if isinstance(error, ProviderError):
            if self.builder.empty and self._index_map is None:
                return Failed(error)
            return Broken(error)
        message = f"{type(error).__name__}: {error}"
        kind = "protocol" if isinstance(error, ProtocolError) else "internal"
        return Broken(ProviderError(f"the response could not be read: {message}", kind=kind))

    def drop(self, keep_from: int | None = None) -> None:
        """Discard this cycle's events (from ``keep_from`` at the earliest) and its drafts."""
        dropped = self.conversation.truncate(max(self.start, keep_from or 0))
        self.sink.update(Discarded(tuple(event.id for event in dropped)))
        self.builder = EventBuilder()

    def keep_partial(self, *, seed: bool) -> str:
        """Keep what arrived; with ``seed``, hold the partial answer back to be continued."""
        drafts = self.builder.drafts()
        events = self.builder.drain()
        released = [draft.index for draft in drafts]
        seed_text, seed_index = "", 0
        if seed:
            partial = _last_partial_message(events)
            trailing = self._trailing_message()
            if partial is not None:
                events.remove(partial)
                seed_text = partial.content
                seed_index = max(
                    d.index for d in drafts if d.kind == "message" and d.text == seed_text
                )
                released.remove(seed_index)
            elif not events and trailing is not None:
                # the answer was complete but cut short (max_tokens): take it back as the draft
                self.conversation.truncate(len(self.conversation) - 1)
                self.sink.update(Discarded((trailing.id,)))
                self.sink.part(Part(0, MessageDelta(trailing.content)))
                seed_text = trailing.content
        self._append(*events, released=released)
        self.builder = EventBuilder()
        if seed:
            self.builder.seed(seed_index, seed_text)
            self._index_map = IndexMap(seed_index)
        return seed_text

    def _trailing_message(self) -> Message | None:
        events = self.conversation.events
        if len(events) > self.start and isinstance(events[-1], Message):
            return events[-1]
        return None


class IndexMap:
    """Maps a continuation cycle's block indexes onto the draft it continues."""

    def __init__(self, seed_index: int) -> None:
        self.seed_index = seed_index
        self.base = seed_index + 1
        self.map: dict[int, int] = {}

    def part(self, part: Part) -> Part:
        index = self.map.get(part.index)
        if index is None:
            taken = self.seed_index in self.map.values()
            merge = isinstance(part.content, MessageDelta) and not taken
            index = self.map[part.index] = self.seed_index if merge else self.base + part.index
        return Part(index, part.content)

    def flush(self, flush: Flush) -> Flush:
        return Flush(self.map.get(flush.index, self.base + flush.index), flush.metadata)


def _last_partial_message(events: Sequence[ConversationEvent]) -> Message | None:
    for event in reversed(events):
        if isinstance(event, Message) and event.metadata.get("partial"):
            return event
    return None


def _type_of(value: object) -> object:
    return value.get("type") if isinstance(value, dict) else type(value).__name__
