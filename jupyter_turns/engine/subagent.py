"""Sub-agents: a tool whose call runs its own turn (provider, model, system prompt, tools).

``subagent(name, description, tools=..., model=..., system=..., max_cycles=..., thinking=...)``
(or ``Chat.as_tool``) makes the tool. Its work is not a black box: the nested turn's events are
added to the calling turn marked ``parent`` (the call id), so they are saved in the same record
and drawn inside the call's card by the same views, and a page gets its streaming text as that
card's draft. Its tool calls follow their own run modes (the thread's default for those with
none) and ask through the calling turn's prompter: the same buttons, or the headless policy
where nobody can click; "always allow" is the thread's, both ways. The calling model receives
only the sub-agent's final answer. Stop on the calling turn stops the nested one: its events so
far stay (its running tools answered "cancelled", a "Stopped" notice), and the call answers
"cancelled". A nested turn that fails is the call's error result, and the calling turn goes on.
However the call ends, its response saves the nested turn's outcome, cycles, usage and cost
(``subagent``; a sub-agent's own sub-agents are added in), which the card and the footer show.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ..errors import JupyterTurnsError
from ..model.events import ConversationEvent, Part, ToolCallResponse, Usage
from ..model.sink import (
    Appended,
    Discarded,
    StateChanged,
    SubagentUpdate,
    ToolUpdate,
    Update,
    UsageUpdate,
)
from ..tools.context import Nest, ToolContext
from ..tools.registry import RunMode, Tool, tool
from ..tools.results import ToolResult
from .config import Thinking, ThreadConfig
from .turn_state import cycles_record

if TYPE_CHECKING:
    from ..providers.base import Provider
    from .chat import Chat
    from .turn_state import TurnResult

__all__ = ["NestSink", "SubagentError", "subagent"]


class SubagentError(JupyterTurnsError):
    """The nested turn failed: its error is the tool's error result."""


def subagent(
    name: str,
    description: str,
    *,
    tools: Iterable[Tool | Any] = (),
    provider: Provider | None = None,
    model: str | None = None,
    system: str | None = None,
    max_cycles: int = 10,
    thinking: Thinking = "off",
    run: RunMode | None = None,
) -> Tool:
    """A tool whose call runs a nested turn with the model's ``request`` as its input.

    ``provider``: the calling thread's provider when None. ``run``: the run mode of the call
    itself (None: the thread's default); the nested tools keep their own.
    """
    nested_tools = list(tools)

    async def run_agent(request: str, ctx: ToolContext) -> ToolResult:
        if ctx.nest is None:
            raise SubagentError(f"{name} runs inside a chat turn, not on its own")
        config = ThreadConfig(model=model, system=system, max_cycles=max_cycles, thinking=thinking)
        chat = _nested_chat(ctx.nest, ctx.call_id, provider, nested_tools, config)
        sink = cast(NestSink, chat.sink)
        earlier = ctx.fields.subagent  # a restarted call: its first attempts count too

        def save(turn: TurnResult | None, outcome: str = "") -> None:
            ctx.fields.subagent = _added(earlier, _summary(turn, sink, outcome))

        # nested results are checked against the recording too (a replay)
        task = asyncio.create_task(chat.send(request, saved=ctx.nest.settings.replay))
        try:
            turn = await asyncio.shield(task)
        except asyncio.CancelledError:  # the caller was stopped: stop the nested turn cleanly
            chat.interrupt("stop")
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), ctx.nest.settings.cancel_grace)
            # the tokens were spent: the "cancelled" response still carries what they cost
            ended = None
            if task.done() and not task.cancelled() and task.exception() is None:
                ended = task.result()
            save(ended, "stopped")
            raise
        except Exception:  # a bug below the nested turn: what the sink counted so far
            save(None, "failed")
            raise
        save(turn)
        return _result(name, turn)

    run_agent.__doc__ = (
        f"{description}\n\nArgs:\n    request: The whole task for {name}, with the context it "
        "needs: it sees nothing of this conversation."
    )
    made = tool(name=name, description=description, run=run)(run_agent)
    return made


def _nested_chat(
    nest: Nest,
    call_id: str,
    provider: Provider | None,
    tools: list[Any],
    config: ThreadConfig,
) -> Chat:
    make = nest.settings.new_chat  # the Chat class of the calling thread
    if make is None:
        raise SubagentError("a sub-agent runs inside a Chat's turn: no Chat to run it")
    replay = nest.settings.replay
    # a replay: the nested turn plays its own saved cycles, whatever provider it names (the
    # caller's is then the caller's recording, and its own would reach a model)
    chosen = replay.nested(call_id) if replay is not None else provider or nest.settings.provider
    if chosen is None:
        raise SubagentError("no provider: give subagent(..., provider=...)")
    chat: Chat = make(
        chosen,
        tools=tools,
        prompter=nest.prompter,
        sink=NestSink(nest, call_id),
        config=replace(
            config, run_mode=nest.settings.default_run, cancel_grace=nest.settings.cancel_grace
        ),
    )
    chat.execution.allowed = nest.settings.allowed  # "always allow" is the thread's
    return chat


def _summary(turn: TurnResult | None, sink: NestSink, outcome: str = "") -> dict[str, Any]:
    """What the response saves of the nested turn (``subagent``): how it ended, its cycles, and
    the usage and cost of it and of its own sub-agents. Without a result (a turn that did not
    end in time, or raised), the nested sink's live count."""
    if turn is None:
        usage, cost, cycles = sink.usage, sink.cost, sink.cycles
    else:
        usage, cost, cycles = turn.usage, turn.cost_usd, turn.cycles
        for event in turn.events:  # sub-agents of the sub-agent
            if not isinstance(event, ToolCallResponse) or event.parent is not None:
                continue  # a deeper one's usage is in its caller's summary already
            summary = event.subagent
            if summary is not None:
                usage = usage + Usage(**summary.get("usage", {}))
                extra = summary.get("cost_usd")
                cost = None if cost is None or extra is None else cost + extra
        if not outcome:
            outcome = "failed" if turn.outcome in FAILED else turn.outcome
    summary = {"outcome": outcome, "cycles": cycles, "usage": usage.as_dict(), "cost_usd": cost}
    if turn is not None:
        summary["per_cycle"] = cycles_record(turn.ends)  # a replay ends them alike
    return summary


def _added(earlier: Any, summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with an earlier attempt's cycles, usage and cost added (its events are in
    the card too); the outcome is the last attempt's."""
    if not isinstance(earlier, dict):
        return summary
    usage = Usage(**earlier["usage"]) + Usage(**summary["usage"])
    before, now = earlier["cost_usd"], summary["cost_usd"]
    return {
        **summary,
        "cycles": earlier["cycles"] + summary["cycles"],
        "usage": usage.as_dict(),
        "cost_usd": None if before is None or now is None else before + now,
        "per_cycle": [*earlier.get("per_cycle", []), *summary.get("per_cycle", [])],
    }


FAILED = ("error", "aborted")  # a nested turn that ended so is the call's error


def _result(name: str, turn: TurnResult) -> ToolResult:
    """The final answer for the calling model (a failed nested turn raises: an error result)."""
    if turn.outcome in FAILED:
        errors = [e.message for e in turn.events if e.kind == "error"]
        raise SubagentError(f"{name} failed: {errors[-1] if errors else turn.outcome}")
    answer = _final_answer(turn.events)
    if turn.outcome != "complete":
        answer += f"\n\n[{name} did not finish: {turn.outcome}]"
    return ToolResult(answer or f"({name} gave no answer)")


def _final_answer(events: Iterable[ConversationEvent]) -> str:
    """The text of the nested turn's last answer (after its last tool results)."""
    answer: list[str] = []
    for event in events:
        if event.parent is not None:
            continue
        if isinstance(event, ToolCallResponse) or event.kind == "chat_request":
            answer = []
        elif event.kind == "message":
            answer.append(event.content)
    return "\n\n".join(a for a in answer if a)


class NestSink:
    """The nested turn's sink: its events go to the calling turn marked ``parent``, its text
    to the page as that card's draft, its tool statuses and usage to the calling sink."""

    def __init__(self, nest: Nest, call_id: str) -> None:
        self.nest = nest
        self.call_id = call_id
        nested = getattr(nest.sink, "nested", None)
        self.draft = nested(call_id) if callable(nested) else None
        self._changed = getattr(nest.sink, "nested_changed", lambda: None)
        self.cycles = 0
        self._state = ""
        self.usage, self.cost = Usage(), cast(float | None, None)  # the nested turn's so far

    def part(self, part: Part) -> None:
        if self.draft is not None and self.draft.part(part):
            self._changed()

    def update(self, update: Update) -> None:
        match update:
            case Appended(events=events, released=released):
                for event in events:
                    self.nest.record(self._mark(event))
                if self.draft is not None:
                    self.draft.release(events, released)
                    self._changed()
            case Discarded():
                if self.draft is not None:
                    self.draft.discard()
            case ToolUpdate() | SubagentUpdate():  # nested cards (call ids are unique)
                self.nest.sink.update(update)
            case StateChanged(state=state):  # a new cycle (not a resumed one) starts streaming
                if state == "streaming" and self._state != "interrupted_streaming":
                    self.cycles += 1
                    self._stats()
                self._state = state
            case UsageUpdate(usage=usage, cost_usd=cost):
                self.usage, self.cost = usage, cost
                self._stats()
            case _:
                pass  # retries show in the nested turn's own events

    def nested(self, call_id: str) -> Any:
        """A deeper sub-agent's draft: kept by the page's sink, like every draft."""
        outer = getattr(self.nest.sink, "nested", None)
        return outer(call_id) if callable(outer) else None

    def nested_changed(self) -> None:
        self._changed()

    def _stats(self) -> None:
        self.nest.sink.update(SubagentUpdate(self.call_id, self.cycles, self.usage, self.cost))

    def _mark(self, event: ConversationEvent) -> ConversationEvent:
        if event.parent is not None:  # a deeper sub-agent's: already marked
            return event
        return event.model_copy(update={"parent": self.call_id})
