"""The turn's states and moves, its settings, and what a finished turn returns.

``TRANSITIONS`` is the whole state machine: the coordinator (``turn.py``) may only make the
moves listed here. The cycle-end types are the coordinator's vocabulary for how one streamed
response ended.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from ..errors import ProviderError
from ..model.budget import Budget
from ..model.content import DATA_RULE
from ..model.events import ConversationEvent, Finished, Usage
from ..model.interrupt import InterruptChoice
from ..providers.base import Continuation, Request
from ..tools.executor import ExecutionSettings
from ..tools.registry import Tool
from .cache_life import cache_life
from .compaction import Compaction
from .config import ThreadConfig
from .quoted import Quoted, quote_foreign
from .window import to_send, unscripted

__all__ = [
    "TRANSITIONS",
    "Broken",
    "CycleEnd",
    "Done",
    "Failed",
    "Interrupted",
    "ResponseEnd",
    "Step",
    "TurnConfig",
    "TurnOutcome",
    "TurnResult",
    "TurnState",
]


class TurnState(enum.Enum):
    IDLE = "idle"
    STREAMING = "streaming"
    EVALUATING = "evaluating"
    EXECUTING = "executing"
    CONTINUING = "continuing"
    INTERRUPTED_STREAMING = "interrupted_streaming"
    INTERRUPTED_TOOL = "interrupted_tool"
    REPLYING = "replying"
    BUDGET_PAUSED = "budget_paused"
    COMPLETE = "complete"
    ABORTED = "aborted"


S = TurnState
# Into ABORTED only from the states the coordinator waits in (a cancelled cell lands there) and
# from the interrupt menu's Abort; EVALUATING, CONTINUING and REPLYING pass without waiting.
# Every request starts from IDLE, CONTINUING or REPLYING; BUDGET_PAUSED waits there for the
# answer to the budget prompt when the request would pass a spending limit.
TRANSITIONS: Mapping[TurnState, frozenset[TurnState]] = {
    S.IDLE: frozenset({S.STREAMING, S.BUDGET_PAUSED}),
    S.STREAMING: frozenset({S.EVALUATING, S.INTERRUPTED_STREAMING, S.COMPLETE, S.ABORTED}),
    S.EVALUATING: frozenset({S.EXECUTING, S.CONTINUING, S.INTERRUPTED_STREAMING, S.COMPLETE}),
    S.EXECUTING: frozenset({S.CONTINUING, S.INTERRUPTED_TOOL, S.COMPLETE, S.ABORTED}),
    S.INTERRUPTED_TOOL: frozenset({S.EXECUTING, S.COMPLETE, S.ABORTED}),
    S.CONTINUING: frozenset({S.STREAMING, S.BUDGET_PAUSED}),
    S.INTERRUPTED_STREAMING: frozenset(
        {S.STREAMING, S.CONTINUING, S.EVALUATING, S.REPLYING, S.COMPLETE, S.ABORTED}
    ),
    S.REPLYING: frozenset({S.STREAMING, S.BUDGET_PAUSED}),
    S.BUDGET_PAUSED: frozenset({S.STREAMING, S.COMPLETE, S.ABORTED}),
    S.COMPLETE: frozenset(),
    S.ABORTED: frozenset(),
}


class Step(enum.Enum):
    """What the driver does after a cycle (besides continuing an answer, a Continuation)."""

    END = "end"  # the turn is over (complete, stopped, aborted, error, max cycles)
    NEXT = "next"  # send the conversation again: tool results, or pause_turn
    REPLY = "reply"  # the user replied mid-answer: a new segment of the turn starts


TurnOutcome = Literal["complete", "stopped", "aborted", "error", "max_cycles"]


@dataclass
class TurnConfig:
    """One turn's settings: the thread's (``thread``) and what this turn starts from."""

    thread: ThreadConfig = field(default_factory=ThreadConfig)
    tools: Mapping[str, Tool] = field(default_factory=dict)
    execution: ExecutionSettings = field(default_factory=ExecutionSettings)
    budget: Budget | None = None  # spending limits that pause the turn
    compaction: Compaction = field(default_factory=Compaction)
    context_tokens: int | None = None  # the thread's context in use when the turn starts
    context_window: int | None = None  # the model's (None: unknown)
    # the instruction files' part of the system prompt, read for this turn (the kernel's
    # AGENTS.md / CLAUDE.md, :mod:`jupyter_turns.reading.instructions`): text, no setting
    instructions: str | None = None
    # the thread's events that someone else wrote: sent quoted, as data (:mod:`.quoted`)
    quoted: Quoted | None = None

    def request(
        self,
        events: Sequence[ConversationEvent],
        continuation: Continuation | None,
        cycle: int,
        extra: dict[str, Any] | None = None,
        *,
        scripted: bool = True,
    ) -> Request:
        """The provider request for ``events`` under these settings: what of them is sent (a
        forget marker, a compaction summary: ``window.to_send``; without ``scripted``, for a
        real model, not what the scripted provider wrote; someone else's turns quoted as data:
        ``quoted.quote_foreign``), ``extra`` for the provider."""
        sent = to_send(events)
        return Request(
            events=tuple(quote_foreign(sent if scripted else unscripted(sent), self.quoted)),
            tools=tuple(tool.spec() for tool in self.tools.values()),
            system=self.system_for(events),
            model=self.thread.model,
            max_tokens=self.thread.max_tokens,
            thinking=self.thread.thinking,
            continuation=continuation,
            cycle=cycle,
            extra=dict(extra or {}),
            cache_ttl=cache_life(self.thread.cache_ttl, events),
        )

    def system_for(self, events: Sequence[ConversationEvent]) -> str | None:
        """The system prompt, plus the rule that notebook content is data (never instructions)
        whenever the thread can read the notebook, a request attached some of it or the thread
        holds someone else's turns (quoted as data), then the instruction files (last: the part
        most likely to change, for the prompt cache)."""
        reads = (
            any(tool.reads_notebook for tool in self.tools.values())
            or any(event.kind == "chat_request" and event.attachments for event in events)
            or (self.quoted is not None and bool(self.quoted.ids))
        )
        parts = [self.thread.system, DATA_RULE if reads else None, self.instructions]
        return "\n\n".join(p for p in parts if p) or None


@dataclass(frozen=True, slots=True)
class ResponseEnd:
    """How one complete response ended. Saved per cycle with the turn (``turn.cycles``), so a
    replay ends each cycle as it ended live: its stop reason, where its events end, its usage,
    and which provider and model answered (a thread may change provider between turns)."""

    reason: str
    events: int  # how many events the turn had once this response was in
    usage: Usage | None = None
    cost_usd: float | None = None
    model: str | None = None  # as the server named it
    provider: str | None = None  # the provider's name: anthropic, openai, openai-chat, ...

    def as_dict(self) -> dict[str, Any]:
        usage = self.usage.as_dict() if self.usage is not None else {}
        named = {k: v for k, v in (("model", self.model), ("provider", self.provider)) if v}
        return {
            "stop_reason": self.reason,
            "events": self.events,
            **usage,
            "cost_usd": self.cost_usd,
            **named,
        }


def cycles_record(ends: Sequence[ResponseEnd]) -> list[dict[str, Any]]:
    """How a turn's responses ended, as saved: the provider and the model are written when
    they change (the first response always names them; a reader carries them forward), so a
    long tool loop does not repeat them on every cycle."""
    out: list[dict[str, Any]] = []
    named: tuple[str | None, str | None] = (None, None)
    for end in ends:
        entry = end.as_dict()
        if (end.provider, end.model) == named:
            entry.pop("provider", None)
            entry.pop("model", None)
        named = (end.provider, end.model)
        out.append(entry)
    return out


class TurnResult(Sequence[ConversationEvent]):
    """The turn's events (a sequence) plus how it ended, its usage and its cycle count."""

    def __init__(
        self,
        events: list[ConversationEvent],
        outcome: TurnOutcome,
        usage: Usage,
        cycles: int,
        cost_usd: float | None,
        cycle_usage: list[tuple[Usage, float | None]] | None = None,
        ends: list[ResponseEnd] | None = None,
    ) -> None:
        self.events = events
        self.outcome = outcome
        self.usage = usage
        self.cycles = cycles
        self.cost_usd = cost_usd
        self.cycle_usage = cycle_usage or []  # (usage, estimated cost) of each cycle
        self.ends = ends or []  # how each complete response ended

    @overload
    def __getitem__(self, i: int) -> ConversationEvent: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[ConversationEvent]: ...
    def __getitem__(self, i: int | slice) -> ConversationEvent | Sequence[ConversationEvent]:
        return self.events[i]

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[ConversationEvent]:
        return iter(self.events)

    @property
    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    @property
    def text(self) -> str:
        """The answer text of the turn (its message events joined; not its sub-agents')."""
        return "\n\n".join(
            e.content for e in self.events if e.kind == "message" and e.parent is None
        )

    def __repr__(self) -> str:
        return f"TurnResult(outcome={self.outcome!r}, cycles={self.cycles}, kinds={self.kinds})"


@dataclass(frozen=True, slots=True)
class Done:
    finished: Finished


@dataclass(frozen=True, slots=True)
class Broken:
    error: ProviderError  # the stream failed after some of it was shown


@dataclass(frozen=True, slots=True)
class Failed:
    error: ProviderError  # nothing of the cycle was shown and it will not be retried


@dataclass(frozen=True, slots=True)
class Interrupted:
    choice: InterruptChoice
    alive: bool


CycleEnd = Done | Broken | Failed | Interrupted
