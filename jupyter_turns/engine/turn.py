"""TurnCoordinator: one turn's state machine and its driver loop.

States and moves are the table ``TRANSITIONS``; any other move raises InvalidTransition. Each
cycle streams one response (a CycleReader turns it into events); a response with tool calls
goes to a ToolCoordinator and their results are sent in the next cycle, until the model answers
without tools, the user interrupts, or ``max_cycles`` ends a runaway loop. ``on_boundary``
(persistence) runs at every cycle boundary. The coordinator wires the parts; it does not
execute tools, format output or retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Literal, assert_never

from ..errors import InvalidTransition, ProviderError
from ..model.content import Attachment
from ..model.conversation import Conversation
from ..model.events import ChatRequest, ConversationEvent, ErrorEvent, Finished, Notice, Usage
from ..model.interrupt import (
    InterruptAction,
    InterruptChannel,
    InterruptChoice,
    InterruptContext,
    done_before_interrupt,
)
from ..model.prompter import Prompter
from ..model.sink import Appended, Sink, StateChanged, UsageUpdate
from ..providers.base import Continuation, Provider, Request
from ..text import plural
from ..tools.coordinator import ToolCoordinator
from .cycle import CycleReader
from .retry import ResilientCycle
from .turn_gate import TurnGate
from .turn_interrupts import InterruptSteps, stopped_notice
from .turn_state import (
    TRANSITIONS,
    CycleEnd,
    Done,
    Failed,
    Interrupted,
    ResponseEnd,
    Step,
    TurnConfig,
    TurnOutcome,
    TurnResult,
    TurnState,
)

_CONTEXT_FULL = (
    "The conversation no longer fits the model's context window. "
    "Start a new thread (`%%chat --new`) or shorten the request."
)

__all__ = ["TRANSITIONS", "TurnConfig", "TurnCoordinator", "TurnOutcome", "TurnResult", "TurnState"]


def _redacted_notice(counts: dict[str, int], what: str) -> Notice:
    """One line saying how many secrets were withheld from ``what`` the model was sent (by
    the tool or attachment they were in), so the user knows why it sees ``[redacted: …]``."""
    total = sum(counts.values())
    where = ", ".join(f"{name} {count}" for name, count in counts.items())
    text = (
        f"{plural(total, 'secret')} withheld from {what} ({where}): the model and the saved "
        "record see [redacted: …] in their place."
    )
    return Notice(level="warning", text=text, data={"redacted": total, "in": counts})


class TurnCoordinator(InterruptSteps):
    def __init__(
        self,
        conversation: Conversation,
        provider: Provider,
        *,
        prompter: Prompter,
        sink: Sink,
        config: TurnConfig,
        interrupts: InterruptChannel | None = None,
        on_boundary: Callable[[TurnCoordinator], None] | None = None,
        resilient: ResilientCycle | None = None,
    ) -> None:
        self.conversation = conversation
        self.provider = provider
        self.prompter = prompter
        self.sink = sink
        self.config = config
        self.interrupts = interrupts or InterruptChannel()
        self._on_boundary = on_boundary
        self._resilient = resilient or ResilientCycle(
            provider.classify, config.thread.retry, on_status=sink.update
        )
        self.state = TurnState.IDLE
        self.usage = Usage()
        self.cost_usd: float | None = None
        self.cycle_usage: list[tuple[Usage, float | None]] = []  # (usage, cost) per cycle
        self.ends: list[ResponseEnd] = []  # each complete response: saved, replayed
        self.cycles = 0
        self.turn_start = len(conversation)
        self.cycle = CycleReader(conversation, sink, self._append)
        self.gate = TurnGate(config, provider)  # compaction, budget, the context gauge
        self._outcome: TurnOutcome = "complete"

    # ------------------------------------------------------------------ state

    def _to(self, state: TurnState) -> None:
        if state not in TRANSITIONS[self.state]:
            raise InvalidTransition(f"turn cannot go from {self.state.value} to {state.value}")
        self.state = state
        self.sink.update(StateChanged(state.value))

    @property
    def outcome(self) -> TurnOutcome | Literal["running"]:
        if self.state in (TurnState.COMPLETE, TurnState.ABORTED):
            return self._outcome
        return "running"

    @property
    def events(self) -> Sequence[ConversationEvent]:
        """This turn's events so far."""
        return self.conversation.events[self.turn_start :]

    def _append(self, *events: ConversationEvent, released: Sequence[int] = ()) -> None:
        if events or released:  # released alone: draft blocks that end without an event
            self.conversation.extend(events)
            self.sink.update(Appended(tuple(events), tuple(released)))

    def _boundary(self) -> None:
        if self._on_boundary is not None:
            self._on_boundary(self)

    # ------------------------------------------------------------------ the loop

    async def run(
        self, text: str, attachments: Sequence[Attachment] = (), notes: Sequence[str | Notice] = ()
    ) -> TurnResult:
        """Run one turn for ``text`` (+ ``attachments``, ``notes``); see :meth:`Chat.send`."""
        self.interrupts.bind(asyncio.get_running_loop())
        self.interrupts.take()  # a Stop pressed before the turn began is not for this turn
        self.conversation.check_sendable()
        self.turn_start = len(self.conversation)
        attached = [attachment.redacted() for attachment in attachments]
        request = ChatRequest(content=text, attachments=[a for a, _ in attached])
        notices = [n if isinstance(n, Notice) else Notice(level="warning", text=n) for n in notes]
        hidden = {a.label: n for a, n in attached if n}
        if hidden:
            notices.append(_redacted_notice(hidden, "what was attached"))
        self._append(request, *notices)
        if self.gate.context is not None:  # the gauge as the thread left it
            self.sink.update(UsageUpdate(self.usage, None, *self._gauge()))
        try:
            await self._drive()
        except asyncio.CancelledError:
            self._hard_abort()
            raise
        finally:
            self._boundary()
        usage = (self.usage, self.cycles, self.cost_usd, list(self.cycle_usage), list(self.ends))
        return TurnResult(list(self.events), self._outcome, *usage)

    async def _drive(self) -> None:
        segment_cycles = 0
        continuation: Continuation | None = None
        while True:
            events = self.conversation.events
            request = self.gate.request(events, self.turn_start, continuation, self.cycles + 1)
            if not await self._may_send(request):
                return
            segment_cycles += 1
            end = await self._stream_cycle(request, continuation)
            continuation = None
            if isinstance(end, Done):
                self._to(TurnState.EVALUATING)
                step = await self._evaluate(end.finished, segment_cycles)
            elif isinstance(end, Failed) and self.gate.summarizing:
                self._append(self.gate.failed_summary(end.error.message))
                self._to(TurnState.EVALUATING)  # the turn goes on with its own request
                self._to(TurnState.CONTINUING)
                step = Step.NEXT
            elif isinstance(end, Failed):
                self._append(ErrorEvent(message=end.error.message, error_type=end.error.kind))
                self._finish("error")
                return
            else:
                step = await self._after_interrupt(end)
            match step:
                case Step.END:
                    return
                case Step.REPLY:
                    segment_cycles = 0
                case Step.NEXT:
                    pass
                case Continuation():
                    continuation = step
                case _:
                    assert_never(step)
            self._boundary()  # a cycle ended and the turn goes on (the last one: see run())

    async def _may_send(self, request: Request) -> bool:
        """Into STREAMING, unless the request would pass a spending limit and the user (or
        the headless policy) stops the turn at the budget prompt."""
        pause = await self.gate.over_budget(request, self.cost_usd)
        if pause is not None:
            self._to(TurnState.BUDGET_PAUSED)
            answer = await self.prompter.budget(pause)
            if answer.action == "stop":
                why = f" ({answer.reason})" if answer.reason else ""
                self._append(Notice(level="warning", text=f"Stopped: {pause.text}{why}"))
                self._finish("stopped")
                return False
            assert self.config.budget is not None
            self.config.budget.allow(pause)
        self._to(TurnState.STREAMING)
        return True

    async def _evaluate(self, finished: Finished, segment_cycles: int) -> Step | Continuation:
        """After a complete response: run its tools, continue, offer Continue, or end."""
        if self.conversation.pending_calls:
            return await self._tools_then_continue(segment_cycles)
        reason = finished.reason
        if reason in ("pause_turn", "compaction"):  # the server paused; send it all back
            if segment_cycles >= self.config.thread.max_cycles:
                return self._max_cycles()
            self._to(TurnState.CONTINUING)
            return Step.NEXT
        if reason == "max_tokens":
            self._to(TurnState.INTERRUPTED_STREAMING)
            reason_text = "The answer reached the max_tokens limit."
            choice = await self._menu(InterruptContext("streaming", False, reason_text))
            return await self._apply_stream_choice(choice, alive=False, note=None)
        if reason == "refusal":
            detail = finished.details.get("explanation") or finished.details.get("stop_details")
            text = "The model declined to answer." + (f" {detail}" if detail else "")
            self._append(Notice(level="warning", text=text))
        elif reason == "context_window_exceeded":
            self._append(ErrorEvent(message=_CONTEXT_FULL, error_type=reason))
            return self._finish("error")
        return self._finish("complete")

    def _finish(self, outcome: TurnOutcome) -> Literal[Step.END]:
        self._outcome = outcome
        self._to(TurnState.ABORTED if outcome == "aborted" else TurnState.COMPLETE)
        return Step.END

    def _max_cycles(self) -> Literal[Step.END]:
        cycles = plural(self.config.thread.max_cycles, "cycle")
        text = f"Stopped after {cycles} (max-cycles). "
        text += "Run another %%chat cell to let the model go on."
        self._append(Notice(level="warning", text=text))
        return self._finish("max_cycles")

    # ------------------------------------------------------------------ streaming

    async def _stream_cycle(self, request: Request, continuation: Continuation | None) -> CycleEnd:
        self.conversation.check_sendable()
        self.cycles += 1
        self.cycle.begin(continuing=continuation is not None)
        stream = self._resilient.stream(lambda: self.provider.stream(request))
        pump = asyncio.create_task(self.cycle.pump(stream), name="jupyter_turns:pump")
        try:
            while True:
                if await done_before_interrupt(pump, self.interrupts):
                    end = self.cycle.end(pump)
                    if isinstance(end, Done):
                        self._note_end(end.finished)
                    return end
                self.cycle.gate.clear()
                self._to(TurnState.INTERRUPTED_STREAMING)
                choice = await self._menu(InterruptContext("streaming", not pump.done()))
                alive = not pump.done()
                if choice.action is InterruptAction.CONTINUE and alive:
                    self._to(TurnState.STREAMING)
                    self.cycle.gate.set()
                    continue
                if alive:
                    pump.cancel()
                    await asyncio.wait({pump})
                elif not pump.cancelled() and isinstance(pump.exception(), ProviderError):
                    exc = pump.exception()
                    assert isinstance(exc, ProviderError)
                    self._append(ErrorEvent(message=exc.message, error_type=exc.kind))
                return Interrupted(choice, alive)
        except asyncio.CancelledError:
            pump.cancel()
            raise

    def _note_end(self, finished: Finished) -> None:
        usage, model = finished.usage, finished.model or self.config.thread.model
        cost = None if usage is None else self.provider.cost(usage, model)
        self._append(*self.gate.notices(self.conversation.events[self.cycle.start :]))
        name = finished.details.get("provider") or getattr(self.provider, "name", None)
        end = ResponseEnd(finished.reason, len(self.events), usage, cost, finished.model, name)
        self.ends.append(end)
        if usage is None:
            return
        self.gate.finished(finished)
        self.cycle_usage.append((usage, cost))
        self.usage = self.usage + usage
        self.cost_usd = self.provider.cost(self.usage, model)
        self.sink.update(UsageUpdate(self.usage, self.cost_usd, *self._gauge()))

    def _gauge(self) -> tuple[int | None, int | None]:
        return self.gate.context, self.config.context_window

    # ------------------------------------------------------------------ tools

    async def _tools_then_continue(self, segment_cycles: int) -> Step:
        self._to(TurnState.EXECUTING)
        self._boundary()  # the response is in; tools may take long
        stopped = await self._run_tools()
        if stopped is not None:
            self._append(stopped_notice(stopped, tools=True))
            return self._finish("stopped")
        if segment_cycles >= self.config.thread.max_cycles:
            return self._max_cycles()
        self._to(TurnState.CONTINUING)
        return Step.NEXT

    async def _run_tools(self) -> InterruptChoice | None:
        tools = ToolCoordinator(
            self.conversation.pending_requests(self.cycle.start),
            self.config.tools,
            prompter=self.prompter,
            sink=self.sink,
            record=self._append,
            settings=self.config.execution,
            sequential=self.config.thread.sequential_tools,
        )
        responses, stopped = await tools.run_interruptible(
            self.interrupts, self._menu, self._tools_paused
        )
        self._append(*responses)
        hidden = tools.redacted()
        if hidden:
            self._append(_redacted_notice(hidden, "tool results"))
        return stopped

    def _tools_paused(self, paused: bool) -> None:
        self._to(TurnState.INTERRUPTED_TOOL if paused else TurnState.EXECUTING)

    # ------------------------------------------------------------------ hard abort

    def _hard_abort(self) -> None:
        """The cell itself was cancelled: leave a valid conversation and a clear record."""
        if self.state in (TurnState.COMPLETE, TurnState.ABORTED):
            return
        if self.state in (TurnState.STREAMING, TurnState.INTERRUPTED_STREAMING):
            self.cycle.drop(keep_from=self.turn_start + 1)
        self._append(*self.conversation.cancelled_responses("Not run: the cell was interrupted."))
        self._append(Notice(level="warning", text="Interrupted: the turn was aborted."))
        self._outcome = "aborted"
        self._to(TurnState.ABORTED)
