"""The Provider protocol and the request a turn sends through it.

A provider turns a :class:`Request` into stream events (``Part`` / ``Flush`` / ``Finished``) and
maps its own exceptions into :class:`~jupyter_turns.errors.ProviderError` in :meth:`classify`
(the one boundary for foreign errors), so the retry policy stays provider-neutral.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ..errors import ProviderError
from ..model.events import ConversationEvent, StreamEvent, Usage

__all__ = [
    "Continuation",
    "KeySource",
    "Provider",
    "Request",
    "Thinking",
    "ToolSpec",
    "continue_request",
]

KeySource: TypeAlias = Callable[[], str | None]
"""Where a provider's key comes from, asked again before each request (None: no key)."""

_QUOTE_CHARS = 400


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Continuation:
    """Ask the model to continue an answer that stopped after ``partial_text``."""

    partial_text: str
    reason: str = "interrupted"


def continue_request(partial: str) -> str:
    """The user message that asks a model to go on from ``partial`` where it cannot be
    prefilled: the answer's end is quoted so the model knows where it stopped."""
    tail = partial[-_QUOTE_CHARS:]
    return (
        "Your previous answer was cut off. Continue it exactly where it stopped, without "
        f"repeating anything and without any preamble. It ended with:\n\n<answer_end>{tail}"
        "</answer_end>"
    )


Thinking: TypeAlias = Literal["off", "adaptive"] | int  # how much to think; int: a token budget


@dataclass(frozen=True, slots=True)
class Request:
    """One cycle's request: the conversation so far plus the settings that shape the answer."""

    events: Sequence[ConversationEvent]
    tools: tuple[ToolSpec, ...] = ()
    system: str | None = None
    model: str | None = None
    max_tokens: int | None = None
    thinking: Thinking = "adaptive"
    tool_choice: Literal["auto", "any", "none"] = "auto"
    continuation: Continuation | None = None
    cycle: int = 1
    extra: dict[str, Any] = field(default_factory=dict)
    # how long the prompt cache should keep the prefix (engine.cache_life): providers that
    # have the control apply it, the others send nothing for it
    cache_ttl: Literal["5m", "1h"] = "5m"

    @property
    def last_user_text(self) -> str:
        for event in reversed(self.events):
            if event.kind == "chat_request" and event.parent is None:
                return event.content
        return ""


@runtime_checkable
class Provider(Protocol):
    name: str

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Yield the cycle's stream events; raise on failure (``classify`` maps the error)."""
        ...

    def classify(self, error: BaseException) -> ProviderError:
        """Map any exception raised by ``stream`` to a ProviderError with its retryability."""
        ...

    def cost(self, usage: Usage, model: str | None) -> float | None:
        """Estimated cost in USD of ``usage`` on ``model``, or None if unknown."""
        ...
