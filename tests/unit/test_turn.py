from __future__ import annotations

import ast
import asyncio
import inspect

import pytest

from jupyter_turns import Chat, PolicyPrompter, RecordingSink, ToolContext, tool
from jupyter_turns.engine import turn as turn_module
from jupyter_turns.engine import turn_interrupts
from jupyter_turns.engine.turn import TRANSITIONS, TurnCoordinator, TurnState
from jupyter_turns.errors import InvalidTransition
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.interrupt import InterruptAction
from jupyter_turns.model.sink import StateChanged
from jupyter_turns.providers.anthropic_wire import anthropic_messages
from jupyter_turns.providers.scripted import (
    Gate,
    ScriptedProvider,
    cycle,
    message,
    reasoning,
    tool_call,
)

from .helpers import kinds, tool_timeline, until


def _responses(events: object) -> list[ToolCallResponse]:
    return [e for e in events if isinstance(e, ToolCallResponse)]  # type: ignore[attr-defined]


async def test_two_cycle_turn_with_parallel_tools_answers_in_request_order() -> None:
    slow_may_finish = asyncio.Event()
    finished: list[str] = []

    @tool
    async def slow(x: int) -> str:
        await slow_may_finish.wait()
        finished.append("slow")
        return f"slow {x}"

    @tool
    async def fast(x: int) -> str:
        finished.append("fast")
        slow_may_finish.set()  # the second call finishes first
        return f"fast {x}"

    provider = ScriptedProvider(
        [
            cycle(
                reasoning("Two lookups.", signature="sig-1"),
                message("Checking both."),
                tool_call("slow", {"x": 1}, call_id="c1"),
                tool_call("fast", {"x": 2}, call_id="c2"),
            ),
            cycle(message("Both are in.")),
        ]
    )
    chat = Chat(provider=provider, tools=[slow, fast], prompter=PolicyPrompter("allow"))
    turn = await chat.send("look up both")

    assert kinds(turn) == [
        "chat_request",
        "reasoning",
        "message",
        "tool_call_request",
        "tool_call_request",
        "tool_call_response",
        "tool_call_response",
        "message",
    ]
    assert finished == ["fast", "slow"]
    assert [(r.call_id, r.content) for r in _responses(turn)] == [
        ("c1", "slow 1"),
        ("c2", "fast 2"),
    ]
    assert turn.outcome == "complete" and turn.cycles == 2
    provider.assert_complete()
    # the second request carried the results back, in request order
    sent = anthropic_messages(chat.conversation.events)
    assert [b["tool_use_id"] for b in sent[2]["content"]] == ["c1", "c2"]


def _two_sleepers() -> tuple[list[object], asyncio.Event]:
    release = asyncio.Event()

    @tool
    async def a() -> str:
        await asyncio.sleep(0)
        await release.wait()
        return "a"

    @tool
    async def b() -> str:
        await asyncio.sleep(0)
        release.set()
        return "b"

    return [a, b], release


def _calls_ab() -> ScriptedProvider:
    return ScriptedProvider(
        [cycle(tool_call("a", call_id="ca"), tool_call("b", call_id="cb")), cycle(message("ok"))]
    )


async def test_parallel_tools_overlap() -> None:
    tools, _ = _two_sleepers()
    sink = RecordingSink()
    chat = Chat(provider=_calls_ab(), tools=tools, prompter=PolicyPrompter("allow"), sink=sink)
    await chat.send("go")
    timeline = tool_timeline(sink)
    assert timeline[:2] == [("a", "running"), ("b", "running")]  # both started before any ended


async def test_sequential_tools_do_not_overlap() -> None:
    @tool
    async def a() -> str:
        await asyncio.sleep(0)
        return "a"

    @tool
    async def b() -> str:
        await asyncio.sleep(0)
        return "b"

    sink = RecordingSink()
    chat = Chat(
        provider=_calls_ab(),
        tools=[a, b],
        prompter=PolicyPrompter("allow"),
        sink=sink,
        sequential_tools=True,
    )
    await chat.send("go")
    assert tool_timeline(sink) == [("a", "running"), ("a", "done"), ("b", "running"), ("b", "done")]


async def test_a_sequential_tool_runs_alone() -> None:
    @tool
    async def a() -> str:
        await asyncio.sleep(0)
        return "a"

    @tool(sequential=True)
    async def b() -> str:
        await asyncio.sleep(0)
        return "b"

    @tool
    async def c() -> str:
        await asyncio.sleep(0)
        return "c"

    provider = ScriptedProvider(
        [cycle(tool_call("a"), tool_call("b"), tool_call("c")), cycle(message("ok"))]
    )
    sink = RecordingSink()
    chat = Chat(provider=provider, tools=[a, b, c], prompter=PolicyPrompter("allow"), sink=sink)
    await chat.send("go")
    assert tool_timeline(sink) == [
        ("a", "running"),
        ("a", "done"),
        ("b", "running"),
        ("b", "done"),
        ("c", "running"),
        ("c", "done"),
    ]


async def test_stop_during_tools_cancels_each_and_abandons_a_stubborn_one() -> None:
    started: set[str] = set()
    stubborn_finished = asyncio.Event()

    @tool
    async def polite(ctx: ToolContext) -> str:
        started.add("polite")
        await ctx.token.wait()
        return "should not be delivered"

    @tool
    async def stubborn() -> str:
        started.add("stubborn")
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(3600)  # ignores cancellation
        stubborn_finished.set()
        return "never"

    provider = ScriptedProvider(
        [cycle(tool_call("polite", call_id="p"), tool_call("stubborn", call_id="s"))]
    )
    chat = Chat(
        provider=provider,
        tools=[polite, stubborn],
        prompter=PolicyPrompter("allow"),
        cancel_grace=0.05,
    )
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: started == {"polite", "stubborn"})
    chat.interrupt("stop")
    turn = await asyncio.wait_for(task, timeout=10)

    responses = _responses(turn)
    assert [(r.call_id, r.status, r.is_error) for r in responses] == [
        ("p", "cancelled", True),
        ("s", "cancelled", True),
    ]
    assert all("cancelled by user" in r.content for r in responses)
    assert "abandoned" in responses[1].content
    assert not stubborn_finished.is_set()  # the turn ended while the tool still ran
    assert turn.outcome == "stopped"
    chat.conversation.check_sendable()
    provider.assert_complete()


async def test_stop_while_waiting_for_approval_answers_the_call() -> None:
    asked = asyncio.Event()

    async def never_answers(request: object) -> object:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError

    @tool
    def f() -> str:
        return "x"

    chat = Chat(
        provider=ScriptedProvider([cycle(tool_call("f", call_id="c"))]),
        tools=[f],
        prompter=PolicyPrompter(never_answers),  # type: ignore[arg-type]
    )
    task = asyncio.create_task(chat.send("go"))
    await asked.wait()
    chat.interrupt()  # opens the menu; the policy answers STOP
    turn = await task
    [response] = _responses(turn)
    assert response.status == "cancelled" and "before it ran" in response.content


async def test_restart_runs_the_tool_again() -> None:
    runs: list[int] = []
    second_run = asyncio.Event()

    @tool
    async def job(ctx: ToolContext) -> str:
        runs.append(len(runs) + 1)
        if len(runs) == 1:
            await ctx.token.wait()
            return "first"
        second_run.set()
        return "second"

    provider = ScriptedProvider([cycle(tool_call("job")), cycle(message("done"))])
    chat = Chat(provider=provider, tools=[job], prompter=PolicyPrompter("allow"))
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: runs == [1])
    chat.interrupt("restart")
    turn = await task
    [response] = _responses(turn)
    assert runs == [1, 2] and response.content == "second"
    assert [d.action for d in response.decisions] == ["approved", "restarted"]


async def test_max_cycles_ends_a_runaway_loop_with_a_clear_notice() -> None:
    @tool
    def again() -> str:
        return "again"

    provider = ScriptedProvider([cycle(tool_call("again")) for _ in range(3)])
    chat = Chat(provider=provider, tools=[again], prompter=PolicyPrompter("allow"), max_cycles=3)
    turn = await chat.send("loop")
    assert turn.outcome == "max_cycles"
    assert turn.events[-1].kind == "notice" and "max-cycles" in turn.events[-1].text  # type: ignore[union-attr]
    chat.conversation.check_sendable()
    provider.assert_complete()


async def test_pause_turn_continues_without_a_new_user_message() -> None:
    provider = ScriptedProvider(
        [cycle(message("Searching…"), finish="pause_turn"), cycle(message("Found it."))]
    )
    chat = Chat(provider=provider)
    turn = await chat.send("search")
    assert kinds(turn) == ["chat_request", "message", "message"]
    assert len(provider.requests) == 2 and provider.requests[1].events[-1].kind == "message"


async def test_refusal_is_shown_with_its_details() -> None:
    provider = ScriptedProvider(
        [cycle(message("I can't"), finish="refusal", details={"explanation": "policy"})]
    )
    turn = await Chat(provider=provider).send("bad")
    assert turn.events[-1].kind == "notice" and "policy" in turn.events[-1].text  # type: ignore[union-attr]


async def test_thread_continues_across_sends() -> None:
    provider = ScriptedProvider([cycle(message("one")), cycle(message("two"))])
    chat = Chat(provider=provider)
    await chat.send("first")
    second = await chat.send("second")
    assert kinds(second) == ["chat_request", "message"]
    assert [e.kind for e in provider.requests[1].events] == [
        "chat_request",
        "message",
        "chat_request",
    ]


def test_invalid_transition_raises() -> None:
    assert TurnState.COMPLETE not in TRANSITIONS[TurnState.IDLE]
    turn = TurnCoordinator.__new__(TurnCoordinator)
    turn.state = TurnState.IDLE
    with pytest.raises(InvalidTransition, match="from idle to complete"):
        turn._to(TurnState.COMPLETE)


def _reachable(start: TurnState) -> set[TurnState]:
    seen, todo = {start}, [start]
    while todo:
        for target in TRANSITIONS[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


def test_every_state_is_reachable_from_idle_and_every_live_state_can_end() -> None:
    assert set(TRANSITIONS) == set(TurnState)
    terminal = {state for state, targets in TRANSITIONS.items() if not targets}
    assert terminal == {TurnState.COMPLETE, TurnState.ABORTED}
    assert _reachable(TurnState.IDLE) == set(TurnState)
    assert [state for state in TurnState if not _reachable(state) & terminal] == []
    # Cancelling the cell (a second kernel interrupt) lands in a state the turn waits in: each
    # of those can be aborted (test_turn_walk shows the other live states are passed through).
    waits_in = {
        TurnState.STREAMING,
        TurnState.EXECUTING,
        TurnState.INTERRUPTED_STREAMING,
        TurnState.INTERRUPTED_TOOL,
        TurnState.BUDGET_PAUSED,
    }
    assert {s for s, targets in TRANSITIONS.items() if TurnState.ABORTED in targets} == waits_in


def test_the_coordinator_moves_to_exactly_the_states_the_table_lists() -> None:
    source = inspect.getsource(turn_module) + inspect.getsource(turn_interrupts)
    tree = ast.parse(source)
    moved = {
        node.attr
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "_to"
        for arg in call.args
        for node in ast.walk(arg)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "TurnState"
    }
    listed = {state.name for targets in TRANSITIONS.values() for state in targets}
    assert moved == listed


async def test_state_changes_are_reported_in_a_valid_order() -> None:
    @tool
    def f() -> str:
        return "x"

    sink = RecordingSink()
    provider = ScriptedProvider([cycle(tool_call("f")), cycle(message("ok"))])
    await Chat(provider=provider, tools=[f], prompter=PolicyPrompter("allow"), sink=sink).send("go")
    states = [u.state for u in sink.updates if isinstance(u, StateChanged)]
    assert states == [
        "streaming",
        "evaluating",
        "executing",
        "continuing",
        "streaming",
        "evaluating",
        "complete",
    ]
    previous = TurnState.IDLE
    for name in states:
        assert TurnState(name) in TRANSITIONS[previous]
        previous = TurnState(name)


async def test_a_stop_pressed_before_the_turn_is_not_applied_to_it() -> None:
    chat = Chat(provider=ScriptedProvider([cycle(message("hello"))]))
    chat.interrupt(InterruptAction.STOP)
    turn = await chat.send("hi")
    assert turn.outcome == "complete"


async def test_second_send_while_running_is_refused() -> None:
    gate = Gate()
    chat = Chat(provider=ScriptedProvider([[gate, *cycle(message("x"))]]))
    task = asyncio.create_task(chat.send("a"))
    await until(lambda: gate.reached)
    with pytest.raises(Exception, match="already running"):
        await chat.send("b")
    gate.open()
    await task
