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
from dataclasses import replace
from typing import Any, Unpack

from ..errors import JupyterTurnsError
from ..model.budget import Budget, Ledger
from ..model.content import Attachment
from ..model.conversation import Conversation
from ..model.events import Notice, Who
from ..model.interrupt import InterruptAction, InterruptChannel, InterruptChoice
from ..model.prompter import PolicyPrompter, Prompter
from ..model.provenance import TurnOrigin
from ..model.sink import NullSink, Sink
from ..providers.base import Provider
from ..providers.models import model_info
from ..providers.scripted import ScriptedProvider
from ..tools.executor import ExecutionSettings, SavedResults
from ..tools.registry import Tool, tool_map
from .compaction import Compaction, compact_threshold
from .config import Thinking, ThreadConfig, ThreadOptions
from .quoted import Quoted
from .retry import ResilientCycle
from .subagent import subagent
from .turn import TurnConfig, TurnCoordinator, TurnResult

__all__ = ["Chat"]


class Chat:
    """One thread: its conversation, tools, settings and "always allow" decisions.

    The settings are one frozen :class:`~jupyter_turns.engine.config.ThreadConfig`,
    ``chat.config``: give it whole (``config=``) or field by field as keywords (``model``,
    ``system``, ``max_tokens``, ``thinking``, ``run_mode``, ``edits``, ``max_cycles``,
    ``sequential_tools``, ``retry``, ``cancel_grace``, ``budget_usd``, ``session_budget_usd``,
    ``compact_at``; the keywords apply on top of ``config``). Change them with
    ``chat.config = dataclasses.replace(chat.config, ...)``; the next turn uses them.

    ``run_mode`` is the default for tools that do not declare one: ``ask`` (the prompter
    decides), ``unattended`` (run without asking), ``deny`` (never run). ``edits="review"``
    makes the model's notebook cell changes (insert, edit, delete, move; never a run of code)
    without asking: the user keeps or undoes each at the end of the turn.

    ``provider``, ``prompter``, ``sink`` and ``on_boundary`` (called with the running
    TurnCoordinator at every cycle boundary: persistence hooks) are the defaults for turns that
    :meth:`send` is not given its own.

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
        config: ThreadConfig | None = None,
        conversation: Conversation | None = None,
        on_boundary: Callable[[TurnCoordinator], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
        ledger: Ledger | None = None,
        **settings: Unpack[ThreadOptions],
    ) -> None:
        self.config = replace(config or ThreadConfig(), **settings)
        self.provider: Provider = provider or ScriptedProvider()
        self.tools = tool_map(tools)
        self.prompter: Prompter = prompter or PolicyPrompter()
        self.sink: Sink = sink or NullSink()
        self.conversation = conversation or Conversation()
        # what outlives a turn: the "always allow" decisions (each turn gets a copy with its own
        # run mode, provider and saved results: _turn_config)
        self.execution = ExecutionSettings(clock=clock, new_chat=type(self))
        self.on_boundary = on_boundary
        self.interrupts = InterruptChannel()
        self._sleep, self._clock, self._rand = sleep, clock, rand
        self.turn: TurnCoordinator | None = None  # the running turn, if any
        self.ledger = ledger or Ledger()
        self.name = "main"  # the thread's name in the ledger
        self.compact_next = False  # %chat compact: summarize before the next request
        self.pending_notes: list[Notice] = []  # shown (and applied) with the next request
        self.context_tokens: int | None = None  # the gauge: context in use after the last answer
        # the events someone else wrote (a restored notebook's): sent as quoted data, never as
        # this user's requests or the model's own turns (:mod:`.quoted`)
        self.quoted: Quoted | None = None

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens (None: not known for this model)."""
        return self._window(self.provider)

    def _window(self, provider: Provider) -> int | None:
        model = self.config.model or getattr(provider, "model", None)
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
        *,
        sink: Sink | None = None,
        prompter: Prompter | None = None,
        provider: Provider | None = None,
        on_boundary: Callable[[TurnCoordinator], None] | None = None,
        saved: SavedResults | None = None,
        instructions: str | None = None,
    ) -> TurnResult:
        """Run one turn for ``text`` and return its events; the thread keeps them.
        ``attachments`` go with the request as labeled data, secrets withheld (like every tool
        result: :mod:`jupyter_turns.redaction`); ``notes`` are shown after it (a string as a
        warning). ``sink``, ``prompter``, ``provider`` and ``on_boundary`` are this turn's (the
        chat's own when not given); ``saved``: a replayed turn's saved tool results;
        ``instructions``: text added to this turn's system prompt (the instruction files)."""
        if self.turn is not None:
            raise JupyterTurnsError("a turn is already running in this thread")
        sink, prompter = sink or self.sink, prompter or self.prompter
        provider = provider or self.provider
        config = replace(self._turn_config(provider, saved), instructions=instructions)
        resilient = ResilientCycle(
            provider.classify,
            self.config.retry,
            sleep=self._sleep,
            clock=self._clock,
            rand=self._rand,
            on_status=sink.update,
        )
        self.turn = turn = TurnCoordinator(
            self.conversation,
            provider,
            prompter=prompter,
            sink=sink,
            config=config,
            interrupts=self.interrupts,
            on_boundary=on_boundary or self.on_boundary,
            resilient=resilient,
        )
        pending, self.pending_notes = self.pending_notes, []
        try:
            return await turn.run(text, attachments, [*pending, *notes])
        finally:
            self.turn = None
            self.context_tokens = turn.gate.context
            if config.compaction.done:
                self.compact_next = False
            self.ledger.add(self.name, turn.usage, turn.cost_usd)

    def _turn_config(self, provider: Provider, saved: SavedResults | None) -> TurnConfig:
        """This turn's settings: the thread's, with what the turn starts from."""
        thread, window = self.config, self._window(provider)
        execution = replace(  # shares ``allowed``: "always allow" outlives the turn
            self.execution,
            default_run=thread.run_mode,
            edits=thread.edits,
            cancel_grace=thread.cancel_grace,
            provider=provider,  # sub-agents that name no provider use it
            replay=saved,
            origin=self._origin(provider),
        )
        return TurnConfig(
            thread=thread,
            tools=self.tools,
            execution=execution,
            budget=Budget(thread.budget_usd, thread.session_budget_usd, self.ledger),
            compaction=Compaction(
                at=compact_threshold(thread.compact_at, window), requested=self.compact_next
            ),
            context_tokens=self.context_tokens,
            context_window=window,
            quoted=self.quoted,
        )

    def _origin(self, provider: Provider) -> TurnOrigin:
        """The turn about to start, as the cells its tools change are stamped: this thread,
        its conversation, the turn's number (its chat requests so far, plus this one) and
        the model asked."""
        asked = sum(
            1 for e in self.conversation.events if e.kind == "chat_request" and e.parent is None
        )
        model = self.config.model or getattr(provider, "model", None)
        return TurnOrigin(
            thread=self.name,
            conversation_id=self.conversation.conversation_id,
            turn=asked + 1,
            model=model if isinstance(model, str) else None,
        )

    def as_tool(
        self,
        name: str,
        description: str,
        *,
        tools: Iterable[Tool | Callable[..., Any]] | None = None,
        model: str | None = None,
        system: str | None = None,
        max_cycles: int | None = None,
        thinking: Thinking | None = None,
    ) -> Tool:
        """A sub-agent tool running on this chat's provider: each call runs a nested turn with
        ``tools``, ``model``, ``system``, ``max_cycles`` and ``thinking`` — each this chat's own
        unless given (see :func:`jupyter_turns.engine.subagent`)."""
        return subagent(
            name,
            description,
            tools=self.tools.values() if tools is None else tools,
            provider=self.provider,
            model=model or self.config.model,
            system=system if system is not None else self.config.system,
            max_cycles=self.config.max_cycles if max_cycles is None else max_cycles,
            thinking=self.config.thinking if thinking is None else thinking,
        )

    def interrupt(
        self, action: InterruptAction | str | None = None, text: str = "", *, who: Who | None = None
    ) -> None:
        """Interrupt the running turn from any thread.

        Without an action the prompter's interrupt menu opens; with one it applies directly:
        ``stop``, ``abort``, ``reply`` (with ``text``), ``continue``, ``restart``. ``who``: the
        person who asked, as their page said (the stop notice names them).
        """
        if action is None:
            self.interrupts.request(None)
            return
        self.interrupts.request(InterruptChoice(InterruptAction(action), text, who=who))
