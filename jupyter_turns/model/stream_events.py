"""Stream events: what a provider yields for one response, before anything is saved.

A provider yields ``Part(index, content)`` pieces of logical block ``index`` (a piece of text
or reasoning, or one complete tool call, which pieces of its argument text may precede for the
page to show as the model writes them), ``Flush(index, metadata)`` when block ``index`` is
complete, and one ``Finished(reason)`` at the end, with the response's ``Usage``. The
EventBuilder turns flushed blocks into conversation events (:mod:`jupyter_turns.model.events`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "FinishReason",
    "Finished",
    "Flush",
    "MessageDelta",
    "Part",
    "PartContent",
    "ReasoningDelta",
    "StreamEvent",
    "ToolCall",
    "ToolInputDelta",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """A piece of answer text (markdown)."""

    text: str
    kind: Literal["message"] = "message"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of reasoning text; an empty one only opens the block."""

    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete tool call request, never a fragment.

    ``parse_error`` is set (and ``arguments`` empty) when the model's argument text was not a JSON
    object; ``raw_arguments`` then keeps that text so the error shown can quote it.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None
    parse_error: str | None = None
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolInputDelta:
    """A piece of a tool call's argument JSON as the model writes it, for the page only.

    The block's complete :class:`ToolCall` still comes once, at the same index, and is what
    becomes the event: these pieces are never parsed, saved or sent back, and a block that
    never gets its ToolCall (a stopped stream) is dropped. Every piece of a block names its
    call (``call_id``, ``name``); the first may carry no text (the call has just begun). Its
    ``kind`` is the block's kind, so a block takes only tool-call parts.
    """

    text: str
    call_id: str
    name: str
    kind: Literal["tool_call"] = "tool_call"


PartContent: TypeAlias = MessageDelta | ReasoningDelta | ToolCall | ToolInputDelta


@dataclass(frozen=True, slots=True)
class Part:
    index: int
    content: PartContent
    kind: Literal["part"] = "part"


@dataclass(frozen=True, slots=True)
class Flush:
    """Block ``index`` is complete; ``metadata`` rides on the event (signature, raw block...)."""

    index: int
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: Literal["flush"] = "flush"


FinishReason: TypeAlias = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
    "context_window_exceeded",
    "compaction",
    "other",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one response (or, added up, of a turn), as the API bills them.

    ``cache_creation_1h_input_tokens`` is the part of ``cache_creation_input_tokens`` written
    to the 1-hour cache (the API's ``cache_creation.ephemeral_1h_input_tokens``), billed at a
    higher price than the 5-minute rest; saved only when there is some."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_creation_1h_input_tokens + other.cache_creation_1h_input_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        counts = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }
        if self.cache_creation_1h_input_tokens:
            counts["cache_creation_1h_input_tokens"] = self.cache_creation_1h_input_tokens
        return counts


@dataclass(frozen=True, slots=True)
class Finished:
    """The response ended. ``details`` carries e.g. a refusal's ``stop_details``, the
    provider's ``notices`` (texts shown as warnings) and ``compaction_refused`` (why the endpoint
    refused the compact edit: the engine words the notice)."""

    reason: FinishReason
    usage: Usage | None = None
    details: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    kind: Literal["finished"] = "finished"


StreamEvent: TypeAlias = Part | Flush | Finished
