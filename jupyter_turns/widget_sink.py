"""WidgetSink: what a turn tells its ChatWidget — synced traits for durable state, small custom
messages for the live tail, at most ``max_rate`` message flushes a second.

* Draft text: the sink keeps one copy of each unfinished block (its chunks, and how many of them
  the page has). ``delta`` messages carry each block's text added since the last flush. When
  blocks become events (:class:`~jupyter_turns.sink.Appended` names their indexes), ``released``
  tells the page which event takes over which block, so its DOM is kept and never parsed again,
  whatever else is still streaming; the events trait follows in the same flush. ``draft``
  resends the whole draft to a view that rendered late, ``draft_clear`` drops it (Abort).
* Tools: the ``tools`` trait holds each call's status, times and bounded output (see
  :mod:`jupyter_turns.tools.output`) and is synced when a status changes; lines printed in
  between go out as ``progress`` messages with only the new lines, numbered, in the same
  coalesced flushes. A view that renders late gets every running tool's kept lines on ``ready``.

Message shapes: :mod:`jupyter_turns.messages`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .events import ConversationEvent, MessageDelta, Part, ReasoningDelta
from .messages import DraftPart, KernelMessage, ProgressUpdate, TextKind
from .sink import (
    Appended,
    Discarded,
    RetryCleared,
    Retrying,
    StateChanged,
    ToolUpdate,
    Update,
    UsageUpdate,
)
from .tools.output import OutputSnapshot

if TYPE_CHECKING:
    from .widget import ChatWidget

__all__ = ["WidgetSink"]


@dataclass(slots=True)
class _Block:
    """One unfinished block: its text in chunks, the first ``sent`` of which the page has."""

    kind: TextKind
    chunks: list[str] = field(default_factory=list)
    sent: int = 0

    def unsent(self) -> str | None:
        """The text the page has not been sent yet (now counted as sent), or None."""
        if self.sent == len(self.chunks):
            return None
        text = "".join(self.chunks[self.sent :])
        self.chunks[self.sent :] = [text]
        self.sent = len(self.chunks)
        return text

    def text(self) -> str:
        if self.sent > 1:  # what the page has, joined once into one chunk
            self.chunks[: self.sent] = ["".join(self.chunks[: self.sent])]
            self.sent = 1
        return "".join(self.chunks)


class WidgetSink:
    """Feeds a ChatWidget: traits for durable state, coalesced custom messages for the live tail."""

    def __init__(
        self,
        widget: ChatWidget,
        *,
        max_rate: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.widget = widget
        self.interval = 1.0 / max_rate
        self.clock = clock
        self.messages_sent = 0
        self._blocks: dict[int, _Block] = {}  # the draft: unfinished blocks by index
        self._released: list[tuple[int, _Block, str | None]] = []  # (index, block, event id)
        self._events: list[dict[str, Any]] = list(widget.events)
        self._events_dirty = False
        self._scheduled: asyncio.TimerHandle | None = None
        self._last_send = 0.0
        self._tools: dict[str, tuple[str, Any, Any]] = {}  # call -> synced (status, start, end)
        self._outputs: dict[str, OutputSnapshot] = {}  # call -> newest output
        self._lines_sent: dict[str, int] = {}  # call -> output lines the page has been sent
        self._progress: set[str] = set()  # calls with lines not sent yet
        widget.handle("ready", self._on_ready)

    # ------------------------------------------------------------------ hot path

    def part(self, part: Part) -> None:
        content = part.content
        if not isinstance(content, MessageDelta | ReasoningDelta):
            return  # a tool call shows once it is an event
        block = self._blocks.get(part.index)
        if block is None:
            self._blocks[part.index] = _Block(content.kind, [content.text])
        else:
            block.chunks.append(content.text)
        if self._scheduled is None:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        delay = max(0.0, self._last_send + self.interval - loop.time())
        self._scheduled = loop.call_later(delay, self.flush)

    def flush(self) -> None:
        """Send what is pending: the draft's new text and handovers, the events, new tool lines.

        Events are synced at most ``max_rate`` times a second too (the trait is sent whole),
        after the text of the blocks they replace and the ``released`` message naming them.
        """
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        sent = self.messages_sent
        self._send_draft()
        if self._events_dirty:
            self._events_dirty = False
            self.widget.events = list(self._events)
        self._send_progress(list(self._progress))
        if self.messages_sent > sent:
            try:
                self._last_send = asyncio.get_running_loop().time()
            except RuntimeError:
                self._last_send = 0.0

    def drop_pending(self) -> None:
        """Forget what is waiting to be sent (the view is about to be replaced)."""
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        self._events_dirty = False

    def _send_draft(self) -> None:
        """``delta`` with the new text of every block, then ``released`` for the blocks that
        became events. A block at the index of one released before it (the next cycle's
        block 0) starts a new ``delta`` after that ``released``, so the texts never mix."""
        released, self._released = self._released, []
        parts: list[DraftPart] = []
        handed: dict[int, str | None] = {}
        live = [(index, block, False, None) for index, block in self._blocks.items()]
        for index, block, done, event in [*((i, b, True, e) for i, b, e in released), *live]:
            if index in handed:
                self._send_segment(parts, handed)
                parts, handed = [], {}
            text = block.unsent()
            if text is not None:
                parts.append((index, block.kind, text))
            if done:
                handed[index] = event
        self._send_segment(parts, handed)

    def _send_segment(self, parts: list[DraftPart], handed: dict[int, str | None]) -> None:
        if parts:
            self._send({"type": "delta", "parts": parts})
        if handed:
            self._send({"type": "released", "blocks": list(handed.items())})

    def _send_progress(self, calls: set[str] | list[str]) -> None:
        """One ``progress`` message with each call's output lines the page has not been sent."""
        if not calls:
            return
        tools: dict[str, ProgressUpdate] = {}
        for call in calls:
            output = self._outputs[call]
            tools[call] = {
                "head": len(output.head),
                "from": output.tail_start,
                "total": output.total,
                "runs": output.runs_from(self._lines_sent.get(call, 0)),
            }
            self._lines_sent[call] = output.total
        self._progress.difference_update(calls)
        self._send({"type": "progress", "tools": tools})

    def _send(self, message: KernelMessage) -> None:
        self.messages_sent += 1
        self.widget.send(message)

    def live_drafts(self) -> list[DraftPart]:
        """The draft blocks that no event has replaced yet, in index order (what the page
        shows or is about to; what a crash would lose)."""
        return [(i, self._blocks[i].kind, self._blocks[i].text()) for i in sorted(self._blocks)]

    def _on_ready(self, _message: dict[str, Any]) -> None:
        self.flush()
        if self._blocks:
            self._send({"type": "draft", "blocks": self.live_drafts()})
        running = [
            call
            for call, (status, _, _) in self._tools.items()
            if status in ("waiting", "running") and self._outputs[call].total
        ]
        for call in running:  # a new view: every kept line (the trait has them at the end)
            self._lines_sent[call] = 0
        self._send_progress(running)

    # ------------------------------------------------------------------ updates

    def update(self, update: Update) -> None:
        widget = self.widget
        match update:
            case Appended(events=events, released=released):
                self._events.extend(_event_json(e) for e in events)
                self._release(events, released)
                self._events_dirty = True
                if self._scheduled is None:
                    self._schedule()
            case Discarded(event_ids=ids):
                self._blocks = {}
                self._released = []
                gone = set(ids)
                self._events = [e for e in self._events if e.get("id") not in gone]
                self._events_dirty = False
                widget.events = list(self._events)
                self._send({"type": "draft_clear"})
            case StateChanged(state=state):
                widget.status = {**widget.status, "state": state}
            case Retrying():
                retry: dict[str, Any] = {
                    "attempt": update.attempt,
                    "max_attempts": update.max_attempts,
                    "delay_s": update.delay,
                    "reason": update.reason,
                    "until": update.until * 1000,
                }
                widget.status = {**widget.status, "retry": retry}
            case RetryCleared():
                widget.status = {**widget.status, "retry": None}
            case ToolUpdate():
                self._tool(update)
            case UsageUpdate(usage=usage, cost_usd=cost):
                widget.usage = {**usage.as_dict(), "cost_usd": cost}

    def _release(self, events: Sequence[ConversationEvent], indexes: Sequence[int]) -> None:
        """Take the released blocks out of the draft, each with the event that replaces it.

        The text events, in order, replace the released blocks in index order: each takes the
        next block of its kind and length (a block with no event, e.g. an empty one cut short,
        is dropped). Both are copies of the same parts, so they agree; an event that finds no
        block is drawn from its content instead.
        """
        blocks = [(i, self._blocks.pop(i)) for i in sorted(indexes) if i in self._blocks]
        position = 0
        for event in events:
            if event.kind != "message" and event.kind != "reasoning":
                continue
            size = len(event.content)
            for k in range(position, len(blocks)):
                index, block = blocks[k]
                if block.kind == event.kind and sum(map(len, block.chunks)) == size:
                    self._released.extend((i, b, None) for i, b in blocks[position:k])
                    self._released.append((index, block, event.id))
                    position = k + 1
                    break
        self._released.extend((i, b, None) for i, b in blocks[position:])

    def _tool(self, update: ToolUpdate) -> None:
        call = update.call_id
        if update.output is not None:
            self._outputs[call] = update.output
        output = self._outputs.setdefault(call, OutputSnapshot())
        state = (update.status, _ms(update.started_at), _ms(update.ended_at))
        if self._tools.get(call) != state:  # a status change: the durable state, at once
            self._tools[call] = state
            self.widget.tools = {
                **self.widget.tools,
                call: {
                    "name": update.name,
                    "status": state[0],
                    "started_at": state[1],
                    "ended_at": state[2],
                    "progress": [*output.head, *output.tail],
                    "progress_head": len(output.head),
                    "progress_total": output.total,
                },
            }
            self._lines_sent[call] = output.total
            self._progress.discard(call)
        elif output.total > self._lines_sent.get(call, 0):  # new lines: with the next flush
            self._progress.add(call)
            if self._scheduled is None:
                self._schedule()


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _event_json(event: ConversationEvent) -> dict[str, Any]:
    return event.model_dump(mode="json")
