"""What a turn does with the interrupt menu's answer while an answer streams (a mixin of
``TurnCoordinator`` in ``turn.py``, which owns the states and the loop).

Abort drops the cycle; Continue resumes the answer (or runs the calls it already made); Reply
adds the user's words as a new request; Stop keeps what arrived and ends the turn. Every tool
call left without a response gets a "not run" one, so the conversation stays sendable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..model.conversation import Conversation
from ..model.events import ChatRequest, ConversationEvent, ErrorEvent, Notice
from ..model.interrupt import (
    InterruptAction,
    InterruptChannel,
    InterruptChoice,
    InterruptContext,
    ask_menu,
)
from ..model.prompter import Prompter
from ..providers.base import Continuation
from .cycle import CycleReader
from .turn_state import Broken, Interrupted, Step, TurnOutcome, TurnState

__all__ = ["InterruptSteps", "stopped_notice"]


class InterruptSteps:
    conversation: Conversation
    cycle: CycleReader
    prompter: Prompter
    interrupts: InterruptChannel

    def _to(self, state: TurnState) -> None:
        raise NotImplementedError

    def _append(self, *events: ConversationEvent, released: Sequence[int] = ()) -> None:
        raise NotImplementedError

    def _finish(self, outcome: TurnOutcome) -> Literal[Step.END]:
        raise NotImplementedError

    async def _tools_then_continue(self, segment_cycles: int) -> Step:
        raise NotImplementedError

    async def _menu(self, context: InterruptContext) -> InterruptChoice:
        return await ask_menu(self.prompter.interrupt_menu, self.interrupts, context)

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
            self.cycle.drop()
            if note is not None:
                self._append(note)
            self._append(Notice(text="Aborted: the response in progress was discarded."))
            return self._finish("aborted")
        if note is not None:
            self._append(note)
        if action is InterruptAction.CONTINUE:
            if self.conversation.pending_calls:
                self.cycle.keep_partial(seed=False)
                self._to(TurnState.EVALUATING)
                return await self._tools_then_continue(0)
            seed = self.cycle.keep_partial(seed=True)
            self._to(TurnState.CONTINUING)
            return Continuation(seed, "interrupted" if alive else "stream_ended")
        self.cycle.keep_partial(seed=False)
        unrun = self.conversation.cancelled_responses
        if action is InterruptAction.REPLY:
            self._append(*unrun("Not run: the user interrupted with a reply."))
            self._to(TurnState.REPLYING)
            self._append(ChatRequest(content=choice.text))
            return Step.REPLY
        by = _stopper(choice)
        self._append(*unrun(f"Not run: {by} stopped the turn.", who=choice.who))
        self._append(stopped_notice(choice, broken=not alive))
        return self._finish("stopped")


def stopped_notice(choice: InterruptChoice, *, broken: bool = False, tools: bool = False) -> Notice:
    """What a stopped turn says happened: the user's Stop, or the policy's when no person was
    there to choose (a headless run; a stream that broke off with nobody at the widget) — a
    reset connection is not the user's doing."""
    during = " while tools were running" if tools else ""
    if choice.by == "user":
        return Notice(text=f"Stopped by {_stopper(choice)}{during}.")
    what = "the stream broke off" if broken else "the turn was interrupted"
    return Notice(
        level="warning",
        text=f"Stopped by the headless policy{during}: {what} and no one was there to choose "
        "(what arrived is kept).",
    )


def _stopper(choice: InterruptChoice) -> str:
    """Who stopped, in words: the name the clicking page reported, else the user or the policy."""
    if choice.by == "policy":
        return "the headless policy"
    return choice.who.name if choice.who is not None else "the user"
