"""Chat: a conversation thread you can send turns to from any Python code, no notebook needed.

    chat = Chat(provider=ScriptedProvider([...]), tools=[weather], prompter=PolicyPrompter("allow"))
    turn = await chat.send("What's the weather in Oslo?")   # the turn's events
    await chat.send("And tomorrow?")                           # continues the same thread

:meth:`Chat.interrupt` may be called from any thread (a button, a signal handler) while a turn
runs. The magic and the widget build on this class; it knows nothing about Jupyter.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal

from ..errors import JupyterTurnsError
from ..model.budget import Budget, Ledger
from ..model.content import Attachment
from ..model.conversation import Conversation
from ..model.events import Notice
from ..model.interrupt import InterruptAction, InterruptChannel, InterruptChoice
from ..model.prompter import PolicyPrompter, Prompter
from ..model.sink import NullSink, Sink
from ..providers.base import Provider
from ..providers.models import model_info
from ..providers.scripted import ScriptedProvider
from ..tools.executor import ExecutionSettings
from ..tools.registry import RunMode, Tool, tool_map
from .compaction import DEFAULT_COMPACT_AT, Compaction, compact_threshold
from .retry import ResilientCycle, RetryPolicy
from .subagent import subagent
from .turn import TurnConfig, TurnCoordinator, TurnResult

__all__ = ["Chat"]


class Chat:
    """One thread: its conversation, tools, settings and "always allow" decisions.

    ``run_mode`` is the default for tools that do not declare one: ``ask`` (the prompter
    decides), ``unattended`` (run without asking), ``deny`` (never run). ``on_boundary`` is
    called with the running TurnCoordinator at every cycle boundary (persistence hooks here).

    Long threads and cost (docs/architecture.md, "Long threads"): ``budget_usd`` pauses a turn
    before a request that would spend past it (``session_budget_usd`` does the same over ``ledger``,
    the session's spending, which each turn adds to); ``compact_at`` (a share of the model's window,
    or tokens; 0: off) lets the server compact the thread near it; :meth:`compact` and
    :meth:`forget` change what the next request sends.
    """

    def __init__(
        self,
        provider: Provider | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        prompter: Prompter | None = None,
        *,
        sink: Sink | None = None,
        system: str | None = None,
        model: str | None = None,
        max_tokens: int | None = None,
        thinking: Literal["off", "adaptive"] | int = "adaptive",
        run_mode: RunMode = "ask",
        max_cycles: int = 25,
        sequential_tools: bool = False,
        retry: RetryPolicy | None = None,
        cancel_grace: float = 2.0,
        conversation: Conversation | None = None,
        on_boundary: Callable[[TurnCoordinator], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
        budget_usd: float | None = None,
        session_budget_usd: float | None = None,
        ledger: Ledger | None = None,
        compact_at: float | None = DEFAULT_COMPACT_AT,
    ) -> None:
        if max_cycles < 1:
            raise ValueError("max_cycles must be at least 1")
        self.provider: Provider = provider or ScriptedProvider()
        self.tools = tool_map(tools)
        self.prompter: Prompter = prompter or PolicyPrompter()
        self.sink: Sink = sink or NullSink()
        self.conversation = conversation or Conversation()
        self.execution = ExecutionSettings(
            default_run=run_mode,
            cancel_grace=cancel_grace,
            clock=clock,
            new_chat=type(self),
        )
        self.system = system
        self.model = model
        self.max_tokens = max_tokens
        self.thinking = thinking
        self.max_cycles = max_cycles
        self.sequential_tools = sequential_tools
        self.retry = retry or RetryPolicy()
        self.on_boundary = on_boundary
        self.interrupts = InterruptChannel()
        self._sleep, self._clock, self._rand = sleep, clock, rand
        self.turn: TurnCoordinator | None = None  # the running turn, if any
        self.budget_usd, self.session_budget_usd = budget_usd, session_budget_usd
        self.ledger = ledger or Ledger()
        self.name = "main"  # the thread's name in the ledger
        self.compact_at = compact_at
        self.compact_next = False  # %chat compact: summarize before the next request
        self.pending_notes: list[Notice] = []  # shown (and applied) with the next request
        self.context_tokens: int | None = None  # the gauge: context in use after the last answer

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens (None: not known for this model)."""
        model = self.model or getattr(self.provider, "model", None)
        return model_info(model).context_window if isinstance(model, str) else None

    def compact(self) -> None:
        """Summarize the thread (server-side) before its next request."""
        self.compact_next = True

    def forget(self, count: int) -> Notice:
        """Stop sending the oldest ``count`` exchanges (they stay in the thread); the notice
        saying so joins the thread with the next request. Raises ValueError."""
        from .window import forget_marker

        notice = forget_marker([*self.conversation.events, *self.pending_notes], count)
        self.pending_notes.append(notice)
        return notice

    @property
    def allowed_tools(self) -> set[str]:
        """Tools the user chose to "always allow" in this thread."""
        return self.execution.allowed

    async def send(
        self,
        text: str,
        attachments: Sequence[Attachment] = (),
        notes: Sequence[str | Notice] = (),
    ) -> TurnResult:
        """Run one turn for ``text`` and return its events; the thread keeps them.
        ``attachments`` go with the request as labeled data, secrets withheld (like every tool
        result: :mod:`jupyter_turns.redaction`); ``notes`` are shown after it (a string as a
        warning)."""
        if self.turn is not None:
            raise JupyterTurnsError("a turn is already running in this thread")
        self.execution.provider = self.provider  # sub-agents that name no provider use it
        config = TurnConfig(
            tools=self.tools,
            execution=self.execution,
            system=self.system,
            model=self.model,
            max_tokens=self.max_tokens,
            thinking=self.thinking,
            max_cycles=self.max_cycles,
            sequential_tools=self.sequential_tools,
            retry=self.retry,
            budget=Budget(self.budget_usd, self.session_budget_usd, self.ledger),
            compaction=Compaction(
                at=compact_threshold(self.compact_at, self.context_window),
                requested=self.compact_next,
            ),
            context_tokens=self.context_tokens,
            context_window=self.context_window,
        )
        resilient = ResilientCycle(
            self.provider.classify,
            self.retry,
            sleep=self._sleep,
            clock=self._clock,
            rand=self._rand,
            on_status=self.sink.update,
        )
        self.turn = TurnCoordinator(
            self.conversation,
            self.provider,
            prompter=self.prompter,
            sink=self.sink,
            config=config,
            interrupts=self.interrupts,
            on_boundary=self.on_boundary,
            resilient=resilient,
        )
        pending, self.pending_notes = self.pending_notes, []
        turn = self.turn
        try:
            return await turn.run(text, attachments, [*pending, *notes])
        finally:
            self.turn = None
            self.context_tokens = turn.gate.context
            if config.compaction.done:
                self.compact_next = False
            self.ledger.add(self.name, turn.usage, turn.cost_usd)

    def as_tool(
        self,
        name: str,
        description: str,
        *,
        tools: Iterable[Tool | Callable[..., Any]] | None = None,
        model: str | None = None,
        system: str | None = None,
        max_cycles: int | None = None,
        thinking: Literal["off", "adaptive"] | int | None = None,
    ) -> Tool:
        """A sub-agent tool running on this chat's provider: each call runs a nested turn with
        ``tools``, ``model``, ``system``, ``max_cycles`` and ``thinking`` — each this chat's own
        unless given (see :func:`jupyter_turns.engine.subagent`)."""
        return subagent(
            name,
            description,
            tools=self.tools.values() if tools is None else tools,
            provider=self.provider,
            model=model or self.model,
            system=system if system is not None else self.system,
            max_cycles=self.max_cycles if max_cycles is None else max_cycles,
            thinking=self.thinking if thinking is None else thinking,
        )

    def interrupt(self, action: InterruptAction | str | None = None, text: str = "") -> None:
        """Interrupt the running turn from any thread.

        Without an action the prompter's interrupt menu opens; with one it applies directly:
        ``stop``, ``abort``, ``reply`` (with ``text``), ``continue``, ``restart``.
        """
        if action is None:
            self.interrupts.request(None)
            return
        self.interrupts.request(InterruptChoice(InterruptAction(action), text))
