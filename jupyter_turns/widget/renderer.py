"""WidgetSink: what a turn tells its ChatWidget — synced traits for durable state, small custom
messages for the live tail, at most ``max_rate`` message flushes a second.

* Draft text (:mod:`jupyter_turns.widget.draft`): ``delta`` messages with each unfinished
  block's new text, ``released`` when blocks become events; the events trait follows in the
  same flush. ``draft`` resends the whole draft to a view that rendered late, ``draft_clear``
  drops it (Abort). A running sub-agent has its own draft, its messages marked ``parent``.
* Tools: the ``tools`` trait holds each call's status, times and bounded output (see
  :mod:`jupyter_turns.tools.output`) and is synced when a status changes; lines printed in
  between go out as ``progress`` messages with only the new lines, numbered, in the same
  coalesced flushes. A view that renders late gets every running tool's kept lines on ``ready``.

The pace: a flush at most every ``1 / max_rate`` seconds (0.1 s by default); after a flush
whose text filled a message (``FULL_MESSAGE`` characters or more: the model writes faster than
a screenful a second) the next waits twice as long. Each message costs about 470 bytes of
Jupyter framing and comm wrapper whatever it carries: a fast stream then sends half as many
messages, each adding its lines at once as before, and an ordinary one keeps its ten small
steps a second (docs/benchmarks.md, B2).

Nothing is sent before a view says ``ready`` (see :mod:`jupyter_turns.widget.chat_widget`):
until then the draft and the tool lines are kept, not sent, and ``ready`` sends them whole.

Message shapes: :mod:`jupyter_turns.widget.messages`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..model.events import ConversationEvent, Part
from ..model.sink import (
    Appended,
    Discarded,
    OutputSnapshot,
    RetryCleared,
    Retrying,
    StateChanged,
    SubagentUpdate,
    ToolUpdate,
    Update,
    UsageUpdate,
)
from .draft import TranscriptDraft
from .messages import DraftPart, KernelMessage, ProgressUpdate

if TYPE_CHECKING:
    from .chat_widget import ChatWidget

__all__ = ["FULL_MESSAGE", "WidgetSink"]

# characters of text in one flush from which the next flush waits twice as long (a stream that
# fast already adds several lines at each step)
FULL_MESSAGE = 400


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
        self._gap = self.interval  # before the next flush: twice as long after a full message
        self._text_sent = 0  # characters of draft text sent by the flush under way
        self.clock = clock
        self.messages_sent = 0
        self._draft = TranscriptDraft(self._send)  # the top level's unfinished blocks
        self._nested: dict[str, TranscriptDraft] = {}  # running sub-agents' drafts, by call id
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
        if self._draft.part(part) and self._scheduled is None:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        delay = max(0.0, self._last_send + self._gap - loop.time())
        self._scheduled = loop.call_later(delay, self.flush)

    def flush(self) -> None:
        """Send what is pending: the draft's new text and handovers, the events, new tool lines.

        Events are synced at most ``max_rate`` times a second too (the trait is sent whole),
        after the text of the blocks they replace and the ``released`` message naming them.
        """
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        sent, self._text_sent = self.messages_sent, 0
        self._draft.send()
        for draft in self._nested.values():
            draft.send()
        if self._events_dirty:
            self._events_dirty = False
            self.widget.events = list(self._events)
        self._send_progress(list(self._progress))
        if self.messages_sent > sent:
            full = self._text_sent >= FULL_MESSAGE
            self._gap = self.interval * 2 if full else self.interval
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
        if not self.widget.ready:  # no view yet: its ``ready`` gets the draft (_on_ready)
            return
        self.messages_sent += 1
        if message["type"] == "delta":
            self._text_sent += sum(len(part[2]) for part in message["parts"])
        self.widget.stream(message)

    def live_drafts(self) -> list[DraftPart]:
        """The top-level draft blocks no event has replaced yet (what a crash would lose)."""
        return self._draft.live_drafts()

    def nested(self, call_id: str) -> TranscriptDraft:
        """The draft of the sub-agent running as ``call_id``: its messages carry ``parent``."""
        draft = self._nested.get(call_id)
        if draft is None:
            draft = self._nested[call_id] = TranscriptDraft(
                lambda m: self._send(_nested(m, call_id))
            )
        return draft

    def nested_changed(self) -> None:
        """A sub-agent's draft or events changed: flush with the next tick."""
        if self._scheduled is None:
            self._schedule()

    def _on_ready(self, _message: dict[str, Any]) -> None:
        self.flush()
        if not self._draft.empty:
            self._send({"type": "draft", "blocks": self.live_drafts()})
        for call_id, draft in self._nested.items():
            if not draft.empty:
                self._send({"type": "draft", "blocks": draft.live_drafts(), "parent": call_id})
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
                self._draft.release(events, released)
                self._events_dirty = self._events_dirty or bool(events)
                if self._scheduled is None:
                    self._schedule()
            case Discarded(event_ids=ids):
                self._draft.clear()
                for draft in self._nested.values():
                    draft.clear()  # the page's draft_clear drops nested drafts too
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
                context = {"used": update.context_tokens, "window": update.context_window}
                widget.usage = {**usage.as_dict(), "cost_usd": cost, "context": context}
            case SubagentUpdate(call_id=call_id) if call_id in widget.tools:
                stats: dict[str, Any] = {**update.usage.as_dict(), "cycles": update.cycles}
                stats["cost_usd"] = update.cost_usd
                widget.tools = {
                    **widget.tools,
                    call_id: {**widget.tools[call_id], "subagent": stats},
                }

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
                    **self.widget.tools.get(call, {}),  # a sub-agent's stats stay
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


def _nested(message: KernelMessage, call_id: str) -> KernelMessage:
    """``message`` marked as the draft of the sub-agent running as ``call_id``."""
    marked = dict(message, parent=call_id)
    return cast(KernelMessage, marked)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _event_json(event: ConversationEvent) -> dict[str, Any]:
    return event.model_dump(mode="json")
