"""Interrupt fuzz: random interrupt choices at random points of multi-cycle turns with tools.

Hypothesis builds a script (cycles of reasoning, text and tool calls, a broken stream now and
then), a point where the stream is held, a tool that waits, and the user's choices; the turn is
driven through it. Invariants: the conversation is valid to send and survives a save/load, each
tool call has exactly one response, what the display shows is exactly the conversation (no
flushed event duplicated or lost), and Abort discards exactly the current cycle.

The hold point is drawn among the cycles the turn really plays (up to the first one without a
tool call), so nearly every example interrupts something; the test checks that at least
`MIN_INTERRUPTED` of its examples did (`pytest --hypothesis-show-statistics` prints the share).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from jupyter_turns import Chat, PolicyPrompter, ProviderError, ToolContext, tool
from jupyter_turns.model.conversation import Conversation
from jupyter_turns.model.interrupt import InterruptAction, InterruptChoice, InterruptContext
from jupyter_turns.providers.scripted import (
    Fail,
    Gate,
    ScriptedProvider,
    cycle,
    message,
    reasoning,
    tool_call,
)

from .conftest import ShownSink

EXAMPLES = 500
MIN_INTERRUPTED = 0.9  # share of examples with at least one interrupt

STREAM_CHOICES = [
    InterruptChoice(InterruptAction.STOP),
    InterruptChoice(InterruptAction.ABORT),
    InterruptChoice(InterruptAction.REPLY, "change of plan"),
    InterruptChoice(InterruptAction.CONTINUE),
]
TOOL_CHOICES = [
    InterruptChoice(InterruptAction.STOP),
    InterruptChoice(InterruptAction.RESTART),
    InterruptChoice(InterruptAction.CONTINUE),
]


@st.composite
def scripts(draw: st.DrawFn) -> dict[str, Any]:
    cycles = []
    call = 0
    played = None  # the turn ends with the first cycle that calls no tool
    for index in range(draw(st.integers(1, 3))):
        blocks = []
        if draw(st.booleans()):
            blocks.append(reasoning("Thinking it through.", signature="sig"))
        if draw(st.booleans()):
            blocks.append(message(draw(st.sampled_from(["Sure.", "Let me check a few things."]))))
        calls = draw(st.integers(0, 2))
        for _ in range(calls):
            call += 1
            name = draw(st.sampled_from(["fast", "waits"]))
            blocks.append(tool_call(name, {"n": call}, call_id=f"call_{call}"))
        if not blocks:
            blocks.append(message("Done."))
        if calls == 0 and played is None:
            played = index
        cycles.append(cycle(*blocks))
    target = draw(st.integers(0, len(cycles) - 1 if played is None else played))
    point = draw(st.integers(0, len(cycles[target]) - 1))
    mode = draw(st.sampled_from(["gate", "gate", "gate", "break"]))
    return {
        "cycles": cycles,
        "target": target,
        "point": point,
        "mode": mode,
        "stream_choice": draw(st.sampled_from(STREAM_CHOICES)),
        "tool_choice": draw(st.sampled_from(TOOL_CHOICES)),
        "menu_choices": draw(st.lists(st.sampled_from(STREAM_CHOICES), min_size=4, max_size=4)),
    }


@pytest.fixture
def interrupted() -> Iterator[Counter[bool]]:
    """How many examples interrupted something; shared by all examples of the test (on
    purpose: it counts them), and checked once they all ran."""
    seen: Counter[bool] = Counter()
    yield seen
    share = seen[True] / max(seen.total(), 1)
    assert share >= MIN_INTERRUPTED, f"only {share:.0%} of {seen.total()} examples interrupted"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # `interrupted` counts across the examples
    ],
)
@given(plan=scripts())
def test_random_interrupts_keep_every_invariant(
    plan: dict[str, Any], interrupted: Counter[bool]
) -> None:
    interrupted[asyncio.run(_drive(plan))] += 1


async def _drive(plan: dict[str, Any]) -> bool:
    """Play one plan and check the invariants; True if the user interrupted anything."""
    cycles = [list(c) for c in plan["cycles"]]
    target = cycles[plan["target"]]
    gate = Gate()
    if plan["mode"] == "gate":
        target.insert(plan["point"], gate)
    elif plan["mode"] == "break":
        error = ProviderError("connection reset", kind="connection", retryable=True)
        target[plan["point"] + 1 :] = [Fail(error)]
    followups = [cycle(message(f"Follow-up {i}.")) for i in range(8)]
    provider = ScriptedProvider([*cycles, *followups])

    waiting = asyncio.Event()
    release = asyncio.Event()

    @tool(run="unattended")
    async def fast(n: int) -> str:
        """Returns at once."""
        return f"fast {n}"

    @tool(run="unattended")
    async def waits(n: int, ctx: ToolContext) -> str:
        """Waits until released or cancelled."""
        waiting.set()
        await release.wait()
        return f"waited {n}"

    menu_choices = list(plan["menu_choices"])
    menus: list[InterruptContext] = []

    def menu(context: InterruptContext) -> InterruptChoice:
        menus.append(context)
        choice = menu_choices.pop(0) if menu_choices else InterruptChoice(InterruptAction.STOP)
        return choice if choice.valid_in(context) else InterruptChoice(InterruptAction.STOP)

    sink = ShownSink()
    chat = Chat(
        provider=provider,
        tools=[fast, waits],
        sink=sink,
        on_boundary=sink.boundary,
        prompter=PolicyPrompter(interrupt=menu),
        cancel_grace=0.01,
        max_cycles=6,
    )
    task = asyncio.create_task(chat.send("Please do the thing."))
    snapshot: list[Any] | None = None
    aborted_at_gate = False
    tool_interrupted = False
    for _ in range(200_000):
        if task.done():
            break
        if gate.reached and not gate._opened.is_set():
            turn = chat.turn
            assert turn is not None
            snapshot = list(chat.conversation.events[: turn.cycle.start])
            choice = plan["stream_choice"]
            aborted_at_gate = choice.action is InterruptAction.ABORT
            chat.interrupt(choice.action, choice.text)
            await _taken(chat, task)
            gate.open()
        if waiting.is_set() and not release.is_set():
            choice = plan["tool_choice"]
            tool_interrupted = True
            chat.interrupt(choice.action, choice.text)
            await _taken(chat, task)
            release.set()
        await asyncio.sleep(0)
    release.set()
    gate.open()
    result = await asyncio.wait_for(task, 10)

    interrupted = snapshot is not None or tool_interrupted or bool(menus)
    event(f"outcome: {result.outcome}")
    event(f"stream interrupt: {snapshot is not None}; tool interrupt: {tool_interrupted}")
    event(f"menu opened by the turn itself: {bool(menus)}")
    event(f"at least one interrupt: {interrupted}")
    conversation = chat.conversation
    # valid to send, and a save/load round trip changes nothing
    conversation.check_sendable()
    reloaded = Conversation.from_record(json.loads(json.dumps(conversation.to_record())))
    assert list(reloaded.events) == list(conversation.events)
    # each tool call answered exactly once
    calls = [e.call_id for e in conversation.events if e.kind == "tool_call_request"]
    answers = [e.call_id for e in conversation.events if e.kind == "tool_call_response"]
    assert sorted(calls) == sorted(answers) and len(set(answers)) == len(answers)
    # the display holds exactly the conversation: nothing duplicated, nothing lost
    assert sink.events == [e.model_dump(mode="json") for e in conversation.events]
    assert len({e["id"] for e in sink.events}) == len(sink.events)
    # and the saved record is what was shown
    assert sink.records[-1]["events"] == sink.events
    if aborted_at_gate and snapshot is not None:
        assert list(conversation.events[: len(snapshot)]) == snapshot
        assert [e.kind for e in conversation.events[len(snapshot) :]] == ["notice"]
        assert result.outcome == "aborted"
    return interrupted


async def _taken(chat: Chat, task: asyncio.Task[Any]) -> None:
    """Yield until the turn took the interrupt request (or ended)."""
    while chat.interrupts.pending and not task.done():  # noqa: ASYNC110 - polls turn state
        await asyncio.sleep(0)
