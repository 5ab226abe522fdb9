"""One thread of conversation: ordered events that are always valid to send, and their JSON.

Invariant, checked on every append and on load: every tool call request is answered exactly once,
no answer names an unknown or already answered call, no user request arrives while calls are
unanswered, and reasoning metadata (a thinking signature) is kept byte-for-byte. Before each
request the coordinator also calls :meth:`Conversation.check_sendable`.

The events are provider-neutral: the Anthropic wire format they are sent in is
:func:`jupyter_turns.providers.anthropic_wire.anthropic_messages`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from ..errors import ConversationError, SchemaError
from .events import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    ConversationEvent,
    Decision,
    ToolCallRequest,
    ToolCallResponse,
    Who,
    conversation_record,
    event_adapter,
    new_id,
)

__all__ = ["ORPHAN_TEXT", "Conversation", "parse_events"]

_ASSISTANT_KINDS = frozenset({"reasoning", "message", "block", "tool_call_request"})
ORPHAN_TEXT = "No result: the session ended before this tool call finished."


class Conversation:
    """The ordered events of one thread plus its id; see the module docstring for the invariant."""

    def __init__(
        self,
        events: Iterable[ConversationEvent] = (),
        *,
        conversation_id: str | None = None,
        checked: bool = True,
    ) -> None:
        self.conversation_id = conversation_id or new_id()
        # False: a log of calls never sent to a model (``%chat serve``: a client's calls may
        # overlap), kept without the send invariant
        self.checked = checked
        self._events: list[ConversationEvent] = []
        self._outstanding: dict[str, int] = {}  # call_id -> index of its request
        self._seen_calls: set[str] = set()
        self._nested_calls: set[str] = set()  # tool calls inside sub-agents' turns
        self._open_inquiries: set[str] = set()
        self._answering = False  # tool responses have started for the current cycle
        for event in events:
            self.append(event)

    # ------------------------------------------------------------------ reading

    @property
    def events(self) -> Sequence[ConversationEvent]:
        return self._events

    def __len__(self) -> int:
        return len(self._events)

    @property
    def pending_calls(self) -> list[str]:
        """Call ids of tool calls that still need a response, in request order."""
        return list(self._outstanding)

    def pending_requests(self, since: int = 0) -> list[ToolCallRequest]:
        """The unanswered tool call requests from event ``since`` on, in request order."""
        pending = self._outstanding
        tail = self._events[since:]
        return [e for e in tail if isinstance(e, ToolCallRequest) and e.call_id in pending]

    def check_sendable(self) -> None:
        """Raise unless the events can be sent to the model as they are."""
        if self._outstanding:
            raise ConversationError(
                "cannot send the conversation: tool calls without a response: "
                + ", ".join(self._outstanding)
            )

    # ------------------------------------------------------------------ writing

    def append(self, event: ConversationEvent) -> None:
        if self.checked:
            self._check(event)
        self._events.append(event)

    def extend(self, events: Iterable[ConversationEvent]) -> None:
        for event in events:
            self.append(event)

    def truncate(self, length: int) -> list[ConversationEvent]:
        """Drop every event after the first ``length`` (Abort); returns the dropped events."""
        if not 0 <= length <= len(self._events):
            raise ConversationError(f"cannot truncate {len(self._events)} events to {length}")
        kept, dropped = self._events[:length], self._events[length:]
        self._events, self._outstanding, self._seen_calls = [], {}, set()
        self._nested_calls = set()
        self._open_inquiries, self._answering = set(), False
        for event in kept:
            self.append(event)
        return dropped

    def remove(self, ids: Collection[str]) -> list[ConversationEvent]:
        """Take the events ``ids`` out (whole turns: a chat cell run again takes its earlier
        turn's place); returns them. Raises ConversationError, changing nothing, when what is
        left would not be valid."""
        kept = [e for e in self._events if e.id not in ids]
        checked = Conversation(kept, conversation_id=self.conversation_id)
        taken = [e for e in self._events if e.id in ids]
        self._events, self._outstanding = checked._events, checked._outstanding
        self._seen_calls, self._nested_calls = checked._seen_calls, checked._nested_calls
        self._open_inquiries, self._answering = checked._open_inquiries, checked._answering
        return taken

    def answer_orphans(self, text: str = ORPHAN_TEXT) -> list[str]:
        """Give every unanswered tool call an error response; returns their call ids."""
        orphans = self.pending_calls
        self.extend(self.cancelled_responses(text, by_user=False))
        return orphans

    def cancelled_responses(
        self, text: str, *, by_user: bool = True, who: Who | None = None
    ) -> list[ToolCallResponse]:
        """A "cancelled" error response for each unanswered tool call, not yet appended
        (``who``: the person whose Stop it was, as their page said)."""
        decisions = (
            [Decision(action="cancelled", by="user", detail=text, who=who)] if by_user else []
        )
        return [
            ToolCallResponse(
                call_id=call_id,
                content=text,
                is_error=True,
                status="cancelled",
                decisions=decisions,
            )
            for call_id in self.pending_calls
        ]

    def _check(self, event: ConversationEvent) -> None:
        parent = event.parent
        if parent is not None:  # a sub-agent's event: kept for readers, never sent
            if parent not in self._seen_calls and parent not in self._nested_calls:
                raise ConversationError(f"nested event for unknown tool call {parent!r}")
            if event.kind == "tool_call_request":
                self._nested_calls.add(event.call_id)
            return
        kind = event.kind
        if kind == "chat_request":
            if self._outstanding:
                raise ConversationError(
                    "a new user request cannot follow unanswered tool calls: "
                    + ", ".join(self._outstanding)
                )
            self._answering = False
        elif kind in _ASSISTANT_KINDS:
            if self._answering:
                if self._outstanding:
                    raise ConversationError(
                        "assistant output cannot follow a partial set of tool responses; "
                        "unanswered: " + ", ".join(self._outstanding)
                    )
                self._answering = False
            if event.kind == "tool_call_request":
                if event.call_id in self._seen_calls:
                    raise ConversationError(f"duplicate tool call id {event.call_id!r}")
                self._seen_calls.add(event.call_id)
                self._outstanding[event.call_id] = len(self._events)
        elif event.kind == "tool_call_response":
            if event.call_id not in self._outstanding:
                state = "already answered" if event.call_id in self._seen_calls else "unknown"
                raise ConversationError(f"response to {state} tool call {event.call_id!r}")
            del self._outstanding[event.call_id]
            self._answering = True
        elif event.kind == "inquiry_request":
            if event.call_id not in self._seen_calls:
                raise ConversationError(f"inquiry for unknown tool call {event.call_id!r}")
            self._open_inquiries.add(event.inquiry_id)
        elif event.kind == "inquiry_response":
            if event.inquiry_id not in self._open_inquiries:
                raise ConversationError(f"answer to unknown inquiry {event.inquiry_id!r}")
            self._open_inquiries.discard(event.inquiry_id)

    # ------------------------------------------------------------------ JSON

    def to_record(self, **extra: Any) -> dict[str, Any]:
        """The record of the whole thread: ``{"version", "conversation_id", "events", **extra}``."""
        return conversation_record(self.conversation_id, self._events, **extra)

    @classmethod
    def from_record(cls, record: Any, *, repair: bool = True) -> Conversation:
        """Read a record of any schema version this package has written.

        With ``repair`` a record that ends with unanswered tool calls (a kernel that died while
        tools ran) gets error responses for them, so the result is valid to send.
        """
        events = parse_events(record)
        conversation = cls(conversation_id=str(record["conversation_id"]))
        for position, event in enumerate(events):
            try:
                conversation.append(event)
            except ConversationError as exc:
                raise ConversationError(f"saved event #{position} ({event.kind}): {exc}") from exc
        if repair:
            conversation.answer_orphans()
        return conversation


def parse_events(record: Any) -> list[ConversationEvent]:
    """Validate a record's envelope and events; raises SchemaError naming what is wrong."""
    if not isinstance(record, dict):
        raise SchemaError(f"a conversation record is a JSON object, not {type(record).__name__}")
    version = record.get("version")
    if type(version) is not int or version not in READABLE_VERSIONS:  # True == 1, "1" is not 1
        if type(version) is int and version > SCHEMA_VERSION:
            raise SchemaError(
                f"record schema version {version} is newer than this jupyter_turns reads "
                f"(up to {SCHEMA_VERSION}); upgrade jupyter_turns"
            )
        raise SchemaError(f"unknown record schema version {version!r}")
    conversation_id = record.get("conversation_id")
    if not isinstance(conversation_id, str) or not 0 < len(conversation_id) <= 200:
        raise SchemaError("record has no 'conversation_id' string (1 to 200 characters)")
    raw_events = record.get("events")
    if not isinstance(raw_events, list):
        raise SchemaError("record has no 'events' list")
    if _depth(raw_events) > MAX_DEPTH:
        raise SchemaError(f"record is nested deeper than {MAX_DEPTH} levels")
    events = []
    for position, raw in enumerate(raw_events):
        try:
            events.append(event_adapter.validate_python(raw))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"][1:]) or "the event"
            raise SchemaError(
                f"saved event #{position} is not valid: {where}: {error['msg']}"
            ) from exc
    return events


MAX_DEPTH = 64  # deeper JSON is not something this package writes; it could not be sent back


def _depth(value: Any) -> int:
    """How deeply ``value``'s lists and dicts nest (iterative: a crafted file can be deep)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest
