from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_turns import Chat, PolicyPrompter, ProviderError, RecordingSink, tool
from jupyter_turns.model.conversation import Conversation
from jupyter_turns.model.events import ChatRequest, Message, MessageDelta, Notice, Part
from jupyter_turns.model.interrupt import InterruptAction, InterruptChoice, InterruptContext
from jupyter_turns.model.sink import Discarded
from jupyter_turns.providers.anthropic_wire import anthropic_messages
from jupyter_turns.providers.scripted import (
    Fail,
    Gate,
    ScriptedProvider,
    cycle,
    message,
    reasoning,
    tool_call,
)

from .helpers import API_KINDS, until


@tool(run="unattended")
def lookup(q: str) -> str:
    return f"result for {q}"


def _gated(items: list[object], at: int) -> tuple[list[object], Gate]:
    gate = Gate()
    return [*items[:at], gate, *items[at:]], gate


async def _interrupt_at_gate(
    chat: Chat, gate: Gate, text: str, choice: InterruptChoice | None
) -> object:
    task = asyncio.create_task(chat.send(text))
    await until(lambda: gate.reached or task.done())
    if choice is None:
        chat.interrupt()
    else:
        chat.interrupt(choice.action, choice.text)
    await until(lambda: task.done() or not chat.interrupts.pending)  # the turn took it
    gate.open()
    return await asyncio.wait_for(task, 10)


def _message_text(events: object) -> list[str]:
    return [e.content for e in events if isinstance(e, Message)]  # type: ignore[attr-defined]


async def test_stop_keeps_flushed_and_partial_text() -> None:
    first = cycle(reasoning("hmm", signature="s"), message("Alpha beta gamma"))
    # stop after the reasoning flushed and two words of the message arrived
    items, gate = _gated(first, 4)
    chat = Chat(provider=ScriptedProvider([items]))
    turn = await _interrupt_at_gate(chat, gate, "go", InterruptChoice(InterruptAction.STOP))
    assert [e.kind for e in turn] == ["chat_request", "reasoning", "message", "notice"]  # type: ignore[attr-defined]
    assert _message_text(turn) == ["Alpha beta "]
    assert turn.events[2].metadata == {"partial": True}  # type: ignore[attr-defined]
    assert turn.outcome == "stopped"  # type: ignore[attr-defined]


async def test_abort_discards_only_the_current_cycle() -> None:
    second, gate = _gated(cycle(message("Here is what I found about it")), 3)
    provider = ScriptedProvider(
        [cycle(message("Looking."), tool_call("lookup", {"q": "x"})), second]
    )
    sink = RecordingSink()
    chat = Chat(provider=provider, tools=[lookup], sink=sink)
    turn = await _interrupt_at_gate(chat, gate, "go", InterruptChoice(InterruptAction.ABORT))
    assert [e.kind for e in turn] == [  # type: ignore[attr-defined]
        "chat_request",
        "message",
        "tool_call_request",
        "tool_call_response",
        "notice",
    ]
    assert turn.outcome == "aborted"  # type: ignore[attr-defined]
    assert any(isinstance(u, Discarded) for u in sink.updates)
    chat.conversation.check_sendable()


async def test_reply_keeps_the_partial_text_and_starts_a_turn_with_the_reply() -> None:
    first, gate = _gated(cycle(message("I will write a long essay about")), 3)
    provider = ScriptedProvider([first, cycle(message("Sure, briefly then."))])
    chat = Chat(provider=provider)
    choice = InterruptChoice(InterruptAction.REPLY, "Keep it short!")
    turn = await _interrupt_at_gate(chat, gate, "essay", choice)
    assert [e.kind for e in turn] == ["chat_request", "message", "chat_request", "message"]  # type: ignore[attr-defined]
    assert turn.events[2].content == "Keep it short!"  # type: ignore[attr-defined]
    assert _message_text(turn) == ["I will write ", "Sure, briefly then."]
    sent = provider.requests[1].events
    assert [e.kind for e in sent] == ["chat_request", "message", "chat_request"]


async def test_continue_on_a_live_stream_resumes_it() -> None:
    items, gate = _gated(cycle(message("one two three four")), 2)
    chat = Chat(provider=ScriptedProvider([items]))
    turn = await _interrupt_at_gate(chat, gate, "go", InterruptChoice(InterruptAction.CONTINUE))
    assert _message_text(turn) == ["one two three four"]
    assert turn.outcome == "complete"  # type: ignore[attr-defined]


async def test_menu_opened_without_a_choice_asks_the_prompter() -> None:
    contexts: list[InterruptContext] = []

    def menu(context: InterruptContext) -> InterruptChoice:
        contexts.append(context)
        return InterruptChoice(InterruptAction.CONTINUE)

    items, gate = _gated(cycle(message("a b c")), 1)
    chat = Chat(provider=ScriptedProvider([items]), prompter=PolicyPrompter(interrupt=menu))
    turn = await _interrupt_at_gate(chat, gate, "go", None)
    assert contexts == [InterruptContext("streaming", True)]
    assert _message_text(turn) == ["a b c"]


def _broken_after(words: str, keep: int) -> list[object]:
    items = cycle(message(words))
    return [
        *items[:keep],
        Fail(ProviderError("connection reset", kind="connection", retryable=True)),
    ]


async def test_continue_on_a_dead_stream_yields_one_message_partial_then_continuation() -> None:
    provider = ScriptedProvider(
        [_broken_after("The quick brown fox", 2), cycle(message("brown fox jumps."))]
    )
    prompter = PolicyPrompter(interrupt=lambda ctx: InterruptChoice(InterruptAction.CONTINUE))
    sink = RecordingSink()
    chat = Chat(provider=provider, prompter=prompter, sink=sink)
    turn = await chat.send("go")
    assert _message_text(turn) == ["The quick brown fox jumps."]
    assert [e.kind for e in turn] == ["chat_request", "error", "message"]  # type: ignore[attr-defined]
    continuation = provider.requests[1].continuation
    assert continuation is not None and continuation.partial_text == "The quick "
    # the live view got the continuation appended to the same draft block
    shown = "".join(p.content.text for p in sink.parts if isinstance(p.content, MessageDelta))
    assert shown == "The quick brown fox jumps."
    assert {p.index for p in sink.parts} == {0}


async def test_a_stop_says_who_stopped_the_user_or_the_headless_policy() -> None:
    """A reset connection with nobody to choose is not "Stopped by the user."."""
    chat = Chat(provider=ScriptedProvider([_broken_after("The quick brown fox", 2)]))
    turn = await chat.send("go")
    assert [e.text for e in turn if isinstance(e, Notice)] == [
        "Stopped by the headless policy: the stream broke off and no one was there to choose"
        " (what arrived is kept)."
    ]
    items, gate = _gated(cycle(message("Alpha beta gamma")), 2)
    chat = Chat(provider=ScriptedProvider([items]))
    turn = await _interrupt_at_gate(chat, gate, "go", InterruptChoice(InterruptAction.STOP))
    assert [e.text for e in turn if isinstance(e, Notice)] == ["Stopped by the user."]


async def test_max_tokens_offers_continue_and_extends_the_same_message() -> None:
    provider = ScriptedProvider(
        [cycle(message("Part one, "), finish="max_tokens"), cycle(message("part two."))]
    )
    asked: list[InterruptContext] = []

    def menu(context: InterruptContext) -> InterruptChoice:
        asked.append(context)
        return InterruptChoice(InterruptAction.CONTINUE)

    chat = Chat(provider=provider, prompter=PolicyPrompter(interrupt=menu))
    turn = await chat.send("go")
    assert asked and not asked[0].stream_alive and "max_tokens" in (asked[0].reason or "")
    assert _message_text(turn) == ["Part one, part two."]
    assert provider.requests[1].continuation.partial_text == "Part one, "  # type: ignore[union-attr]


async def test_max_tokens_headless_keeps_the_answer() -> None:
    provider = ScriptedProvider([cycle(message("Cut sh"), finish="max_tokens")])
    turn = await Chat(provider=provider).send("go")
    assert _message_text(turn) == ["Cut sh"] and turn.outcome == "stopped"


# ------------------------------------------------------------------ property: interrupt anywhere

_CHOICES = [
    InterruptChoice(InterruptAction.STOP),
    InterruptChoice(InterruptAction.ABORT),
    InterruptChoice(InterruptAction.REPLY, "new direction"),
    InterruptChoice(InterruptAction.CONTINUE),
]


def _script(call_ids: tuple[str, str]) -> list[list[object]]:
    return [
        cycle(
            reasoning("Let me look.", signature="sig"),
            message("I'll check two things."),
            tool_call("lookup", {"q": "a"}, call_id=call_ids[0]),
            tool_call("lookup", {"q": "b"}, call_id=call_ids[1]),
        ),
        cycle(message("Both results are in, and they agree.")),
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cycle_no=st.integers(0, 1),
    point=st.integers(0, 40),
    choice=st.sampled_from(_CHOICES),
    dead=st.booleans(),
)
def test_interrupt_anywhere_keeps_the_conversation_valid(
    cycle_no: int, point: int, choice: InterruptChoice, dead: bool
) -> None:
    asyncio.run(_interrupt_anywhere(cycle_no, point, choice, dead))


async def _no_wait(_seconds: float) -> None:
    await asyncio.sleep(0)


async def _interrupt_anywhere(
    cycle_no: int, point: int, choice: InterruptChoice, dead: bool
) -> None:
    script = _script(("c1", "c2"))
    target = script[cycle_no]
    point = min(point, len(target) - 1)
    gate = Gate()
    if dead:
        target[point:] = [Fail(ProviderError("reset", kind="connection", retryable=True))]
    else:
        target.insert(point, gate)
    followups = [cycle(message(f"Follow-up {i}.")) for i in range(4)]
    provider = ScriptedProvider([*script, *followups])
    sink = RecordingSink()
    menus: list[InterruptContext] = []

    def menu(context: InterruptContext) -> InterruptChoice:
        menus.append(context)
        return choice

    prompter = PolicyPrompter(interrupt=menu)
    # A failure before anything was shown is retried after a backoff: not waited out here.
    chat = Chat(provider=provider, tools=[lookup], sink=sink, prompter=prompter, sleep=_no_wait)

    snapshot: list[object] = []
    task = asyncio.create_task(chat.send("question"))
    if not dead:
        await until(lambda: gate.reached or task.done())
        if not task.done():
            assert chat.turn is not None
            snapshot = list(chat.conversation.events[: chat.turn.cycle.start])
            chat.interrupt(choice.action, choice.text)
            await until(lambda: task.done() or not chat.interrupts.pending)
            gate.open()
    turn = await asyncio.wait_for(task, 10)

    conversation = chat.conversation
    # 1. always valid to send, and it survives a save/load unchanged
    conversation.check_sendable()
    reloaded = Conversation.from_record(json.loads(json.dumps(conversation.to_record())))
    assert list(reloaded.events) == list(conversation.events)
    messages = anthropic_messages(conversation.events)
    uses = [b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"]
    results = [
        b["tool_use_id"] for m in messages for b in m["content"] if b["type"] == "tool_result"
    ]
    assert sorted(uses) == sorted(results) and len(set(results)) == len(results)

    if not snapshot and not menus:
        return  # never interrupted: the gate sat after the stream's end, or the failure came
        # before anything was shown and was retried transparently
    action = choice.action
    if action is InterruptAction.ABORT:
        if not dead:
            kept = list(conversation.events[: len(snapshot)])
            assert kept == snapshot
            assert [e.kind for e in conversation.events[len(snapshot) :]] == ["notice"]
        assert turn.outcome == "aborted"
    elif action is InterruptAction.STOP:
        shown = "".join(p.content.text for p in sink.parts if isinstance(p.content, MessageDelta))
        kept = "".join(_message_text(turn))
        assert kept == shown  # every word the user saw is kept, nothing else
        assert turn.outcome == "stopped"
    elif action is InterruptAction.REPLY:
        replies = [e for e in turn if isinstance(e, ChatRequest) and e.content == "new direction"]
        assert len(replies) == 1
        after = turn.events[turn.events.index(replies[0]) + 1 :]
        assert any(e.kind == "message" for e in after)
    else:
        final = [e for e in turn if isinstance(e, Message)]
        assert final, "Continue must end with an answer"
        if not dead:
            full = {"I'll check two things.", "Both results are in, and they agree."}
            assert full & {m.content for m in final}
    # no flushed event is duplicated
    ids = [e.id for e in conversation.events]
    assert len(ids) == len(set(ids))
    api = [e for e in conversation.events if e.kind in API_KINDS]
    assert api[0].kind == "chat_request"


def test_sink_parts_are_the_exact_stream() -> None:
    """The sink gets each Part object the provider yielded, in order (no copies on the hot path)."""
    items = cycle(message("x y z"))
    provider = ScriptedProvider([items])
    sink = RecordingSink()
    asyncio.run(Chat(provider=provider, sink=sink).send("go"))
    assert sink.parts == [i for i in items if isinstance(i, Part)]
    assert all(
        a is b for a, b in zip(sink.parts, [i for i in items if isinstance(i, Part)], strict=True)
    )
