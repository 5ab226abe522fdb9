"""TurnCoordinator: one turn's state machine and its driver loop.

States and moves are the table ``TRANSITIONS``; any other move raises InvalidTransition. Every
Part goes to the renderer sink at once and to the EventBuilder; flushed blocks join the
Conversation. A cycle that ends in tool calls hands them to a ToolCoordinator and the loop sends
their results in the next cycle, until the model answers without tools, the user interrupts, or
``max_cycles`` ends a runaway loop. ``on_boundary`` (persistence) runs at every cycle boundary.
The coordinator does not execute tools, format output or retry: it wires the parts that do.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Literal, assert_never

from .builder import EventBuilder
from .conversation import Conversation
from .errors import InvalidTransition, ProtocolError, ProviderError, StreamBroken
from .events import (
    ChatRequest,
    ConversationEvent,
    Decision,
    ErrorEvent,
    Finished,
    Message,
    MessageDelta,
    Notice,
    Part,
    StreamEvent,
    ToolCallRequest,
    ToolCallResponse,
    Usage,
)
from .interrupt import (
    InterruptAction,
    InterruptChannel,
    InterruptChoice,
    InterruptContext,
    done_before_interrupt,
)
from .prompter import Prompter
from .providers.base import Continuation, Provider, Request
from .retry import ResilientCycle
from .sink import Appended, Discarded, Sink, StateChanged, UsageUpdate
from .text import plural
from .tools.coordinator import ToolCoordinator
from .turn_state import (
    TRANSITIONS,
    Broken,
    CycleEnd,
    Done,
    Failed,
    IndexMap,
    Interrupted,
    Step,
    TurnConfig,
    TurnOutcome,
    TurnResult,
    TurnState,
)

__all__ = ["TRANSITIONS", "TurnConfig", "TurnCoordinator", "TurnOutcome", "TurnResult", "TurnState"]


class TurnCoordinator:
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
            provider.classify, config.retry, on_status=sink.update
        )
        self.state = TurnState.IDLE
        self.usage = Usage()
        self.cost_usd: float | None = None
        self.cycle_usage: list[tuple[Usage, float | None]] = []  # (usage, cost) per cycle
        self.cycles = 0
        self.turn_start = len(conversation)
        self._cycle_start = len(conversation)
        self._builder = EventBuilder()
        self._index_map: IndexMap | None = None
        self._pump_gate = asyncio.Event()
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
        if events:
            self.conversation.extend(events)
            self.sink.update(Appended(tuple(events), tuple(released)))

    def _boundary(self) -> None:
        if self._on_boundary is not None:
            self._on_boundary(self)

    # ------------------------------------------------------------------ the loop

    async def run(self, text: str) -> TurnResult:
        """Run one turn for the user's ``text``; returns when it completes or is aborted."""
        self.interrupts.bind(asyncio.get_running_loop())
        self.interrupts.take()  # a Stop pressed before the turn began is not for this turn
        self.conversation.check_sendable()
        self.turn_start = len(self.conversation)
        self._to(TurnState.STREAMING)
        self._append(ChatRequest(content=text))
        try:
            await self._drive()
        except asyncio.CancelledError:
            self._hard_abort()
            raise
        finally:
            self._boundary()
        return TurnResult(
            list(self.events),
            self._outcome,
            self.usage,
            self.cycles,
            self.cost_usd,
            list(self.cycle_usage),
        )

    async def _drive(self) -> None:
        segment_cycles = 0
        continuation: Continuation | None = None
        while True:
            segment_cycles += 1
            end = await self._stream_cycle(continuation, segment_cycles)
            continuation = None
            if isinstance(end, Done):
                self._to(TurnState.EVALUATING)
                step = await self._evaluate(end.finished, segment_cycles)
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
            self._to(TurnState.STREAMING)

    async def _evaluate(self, finished: Finished, segment_cycles: int) -> Step | Continuation:
        """After a complete response: run its tools, continue, offer Continue, or end."""
        if self.conversation.pending_calls:
            return await self._tools_then_continue(segment_cycles)
        reason = finished.reason
        if reason == "pause_turn":
            if segment_cycles >= self.config.max_cycles:
                return self._max_cycles()
            self._to(TurnState.CONTINUING)
            return Step.NEXT
        if reason == "max_tokens":
            self._to(TurnState.INTERRUPTED_STREAMING)
            context = InterruptContext(
                "streaming", False, "The answer reached the max_tokens limit."
            )
            choice = await self._menu(context)
            return await self._apply_stream_choice(choice, alive=False, note=None)
        if reason == "refusal":
            detail = finished.details.get("explanation") or finished.details.get("stop_details")
            text = "The model declined to answer." + (f" {detail}" if detail else "")
            self._append(Notice(level="warning", text=text))
        elif reason == "context_window_exceeded":
            self._append(
                ErrorEvent(
                    message="The conversation no longer fits the model's context window. "
                    "Start a new thread (`%%chat --new`) or shorten the request.",
                    error_type="context_window_exceeded",
                )
            )
            return self._finish("error")
        return self._finish("complete")

    def _finish(self, outcome: TurnOutcome) -> Literal[Step.END]:
        self._outcome = outcome
        self._to(TurnState.ABORTED if outcome == "aborted" else TurnState.COMPLETE)
        return Step.END

    def _max_cycles(self) -> Literal[Step.END]:
        self._append(
            Notice(
                level="warning",
                text=f"Stopped after {plural(self.config.max_cycles, 'cycle')} (max-cycles). "
                "Run another %%chat cell to let the model go on.",
            )
        )
        return self._finish("max_cycles")

    # ------------------------------------------------------------------ streaming

    def _request(self, continuation: Continuation | None) -> Request:
        config = self.config
        return Request(
            events=tuple(self.conversation.events),
            tools=tuple(tool.spec() for tool in config.tools.values()),
            system=config.system,
            model=config.model,
            max_tokens=config.max_tokens,
            thinking=config.thinking,
            continuation=continuation,
            cycle=self.cycles,
        )

    async def _stream_cycle(
        self, continuation: Continuation | None, segment_cycles: int
    ) -> CycleEnd:
        self.conversation.check_sendable()
        self.cycles += 1
        if continuation is None:
            self._cycle_start = len(self.conversation)
            self._builder = EventBuilder()
            self._index_map = None
        request = self._request(continuation)
        stream = self._resilient.stream(lambda: self.provider.stream(request))
        self._pump_gate.set()
        pump = asyncio.create_task(self._pump(stream), name="jupyter_turns:pump")
        try:
            while True:
                if await done_before_interrupt(pump, self.interrupts):
                    return self._cycle_end(pump)
                self._pump_gate.clear()
                self._to(TurnState.INTERRUPTED_STREAMING)
                choice = self.interrupts.take()
                if choice is None or not choice.valid_in(InterruptContext("streaming")):
                    choice = await self._menu(InterruptContext("streaming", not pump.done()))
                alive = not pump.done()
                if choice.action is InterruptAction.CONTINUE and alive:
                    self._to(TurnState.STREAMING)
                    self._pump_gate.set()
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

    def _cycle_end(self, pump: asyncio.Task[Finished]) -> CycleEnd:
        error = pump.exception()
        if error is None:
            finished = pump.result()
            released = [draft.index for draft in self._builder.drafts()]
            self._append(*self._builder.drain(), released=released)
            unknown = finished.details.get("unknown_events")
            if unknown:
                types = ", ".join(sorted({str(_type_of(e)) for e in unknown}))
                text = f"The API sent {len(unknown)} event(s) this version does not know: {types}."
                self._append(Notice(text=text, data=unknown))
            self._note_usage(finished)
            return Done(finished)
        if isinstance(error, StreamBroken):
            return Broken(error)
        if isinstance(error, ProviderError):
            if self._builder.empty and self._index_map is None:
                return Failed(error)
            return Broken(error)
        message = f"{type(error).__name__}: {error}"
        kind = "protocol" if isinstance(error, ProtocolError) else "internal"
        return Broken(ProviderError(f"the response could not be read: {message}", kind=kind))

    async def _pump(self, stream: AsyncIterator[StreamEvent]) -> Finished:
        gate, sink, builder = self._pump_gate, self.sink, self._builder
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

    def _note_usage(self, finished: Finished) -> None:
        if finished.usage is None:
            return
        model = finished.model or self.config.model
        self.cycle_usage.append((finished.usage, self.provider.cost(finished.usage, model)))
        self.usage = self.usage + finished.usage
        self.cost_usd = self.provider.cost(self.usage, model)
        self.sink.update(UsageUpdate(self.usage, self.cost_usd))

    # ------------------------------------------------------------------ interrupts

    async def _menu(self, context: InterruptContext) -> InterruptChoice:
        """Ask the prompter; a direct choice arriving through the channel meanwhile wins."""
        menu = asyncio.create_task(self.prompter.interrupt_menu(context))
        try:
            while True:
                if await done_before_interrupt(menu, self.interrupts):
                    self.interrupts.take()  # a repeated "open the menu" is answered by this one
                    choice = menu.result()
                    if choice.valid_in(context):
                        return choice
                    return InterruptChoice(InterruptAction.STOP)
                direct = self.interrupts.take()
                if direct is not None and direct.valid_in(context):
                    menu.cancel()
                    return direct
        finally:
            menu.cancel()

    async def _after_interrupt(self, end: Broken | Interrupted) -> Step | Continuation:
        if isinstance(end, Broken):
            self._to(TurnState.INTERRUPTED_STREAMING)
            context = InterruptContext("streaming", False, end.error.message)
            choice = await self._menu(context)
            note = ErrorEvent(message=end.error.message, error_type=end.error.kind)
            return await self._apply_stream_choice(choice, alive=False, note=note)
        return await self._apply_stream_choice(end.choice, alive=end.alive, note=None)

    async def _apply_stream_choice(
        self, choice: InterruptChoice, *, alive: bool, note: ErrorEvent | None
    ) -> Step | Continuation:
        action = choice.action
        if action is InterruptAction.ABORT:
            dropped = self.conversation.truncate(self._cycle_start)
            self.sink.update(Discarded(tuple(event.id for event in dropped)))
            self._builder = EventBuilder()
            if note is not None:
                self._append(note)
            self._append(Notice(text="Aborted: the response in progress was discarded."))
            return self._finish("aborted")
        if note is not None:
            self._append(note)
        if action is InterruptAction.CONTINUE:
            if self.conversation.pending_calls:
                self._keep_partial(seed=False)
                self._to(TurnState.EVALUATING)
                return await self._tools_then_continue(0)
            seed = self._keep_partial(seed=True)
            self._to(TurnState.CONTINUING)
            return Continuation(seed, "interrupted" if alive else "stream_ended")
        self._keep_partial(seed=False)
        if action is InterruptAction.REPLY:
            self._answer_unrun("Not run: the user interrupted with a reply.")
            self._to(TurnState.REPLYING)
            self._append(ChatRequest(content=choice.text))
            return Step.REPLY
        self._answer_unrun("Not run: the user stopped the turn.")
        self._append(Notice(text="Stopped by the user."))
        return self._finish("stopped")

    def _keep_partial(self, *, seed: bool) -> str:
        """Keep what arrived; with ``seed``, hold the partial answer back to be continued."""
        drafts = self._builder.drafts()
        events = self._builder.drain()
        released = [draft.index for draft in drafts]
        seed_text, seed_index = "", 0
        if seed:
            partial = self._last_partial_message(events)
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
        self._builder = EventBuilder()
        if seed:
            self._builder.seed(seed_index, seed_text)
            self._index_map = IndexMap(seed_index)
        return seed_text

    @staticmethod
    def _last_partial_message(events: list[ConversationEvent]) -> Message | None:
        for event in reversed(events):
            if isinstance(event, Message) and event.metadata.get("partial"):
                return event
        return None

    def _trailing_message(self) -> Message | None:
        events = self.conversation.events
        if len(events) > self._cycle_start and isinstance(events[-1], Message):
            return events[-1]
        return None

    def _answer_unrun(self, text: str) -> None:
        """Tool calls of an interrupted response were never run: answer each as such."""
        self._append(
            *(
                ToolCallResponse(
                    call_id=call_id,
                    content=text,
                    is_error=True,
                    status="cancelled",
                    decisions=[Decision(action="cancelled", by="user", detail=text)],
                )
                for call_id in self.conversation.pending_calls
            )
        )

    # ------------------------------------------------------------------ tools

    async def _tools_then_continue(self, segment_cycles: int) -> Step:
        self._to(TurnState.EXECUTING)
        self._boundary()  # the response is in; tools may take long
        stopped = await self._run_tools()
        if stopped:
            self._append(Notice(text="Stopped by the user while tools were running."))
            return self._finish("stopped")
        if segment_cycles >= self.config.max_cycles:
            return self._max_cycles()
        self._to(TurnState.CONTINUING)
        return Step.NEXT

    async def _run_tools(self) -> bool:
        pending = set(self.conversation.pending_calls)
        calls = [
            event
            for event in self.conversation.events[self._cycle_start :]
            if isinstance(event, ToolCallRequest) and event.call_id in pending
        ]
        tools = ToolCoordinator(
            calls,
            self.config.tools,
            prompter=self.prompter,
            sink=self.sink,
            record=self._append,
            settings=self.config.execution,
            sequential=self.config.sequential_tools,
        )
        task = asyncio.create_task(tools.run(), name="jupyter_turns:tools")
        stopped = False
        try:
            while True:
                if await done_before_interrupt(task, self.interrupts):
                    responses = task.result()
                    break
                self._to(TurnState.INTERRUPTED_TOOL)
                context = InterruptContext("tool")
                choice = self.interrupts.take()
                if choice is None or not choice.valid_in(context):
                    choice = await self._menu(context)
                if choice.action is InterruptAction.STOP:
                    responses = await tools.stop()
                    stopped = True
                    break
                if choice.action is InterruptAction.RESTART:
                    tools.restart()
                self._to(TurnState.EXECUTING)
        except asyncio.CancelledError:
            await tools.stop("cancelled: the cell was interrupted")
            raise
        finally:
            task.cancel()
        self._append(*responses)
        return stopped

    # ------------------------------------------------------------------ hard abort

    def _hard_abort(self) -> None:
        """The cell itself was cancelled: leave a valid conversation and a clear record."""
        if self.state in (TurnState.COMPLETE, TurnState.ABORTED):
            return
        if self.state in (TurnState.STREAMING, TurnState.INTERRUPTED_STREAMING):
            dropped = self.conversation.truncate(max(self._cycle_start, self.turn_start + 1))
            self.sink.update(Discarded(tuple(event.id for event in dropped)))
        self.conversation.answer_orphans("Not run: the cell was interrupted.")
        self._append(Notice(level="warning", text="Interrupted: the turn was aborted."))
        self._outcome = "aborted"
        self._to(TurnState.ABORTED)


def _type_of(value: object) -> object:
    return value.get("type") if isinstance(value, dict) else type(value).__name__
