"""What the scripted provider wrote is marked so, and a real model is never sent it."""

from __future__ import annotations

from jupyter_turns import Chat
from jupyter_turns.model.events import is_scripted
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.record.replay_rebuild import ReplayProvider, cycles_of
from jupyter_turns.tools.registry import tool


class _Model(ScriptedProvider):
    """A stand-in for a real model: it plays cycles but is no script (its words are its own)."""

    name = "model"
    marks = False
    sees_scripted = False


@tool(run="unattended")
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_a_real_model_is_sent_only_the_users_requests_of_scripted_turns() -> None:
    script = ScriptedProvider(
        [cycle(tool_call("add", {"a": 2, "b": 3}, call_id="c1")), cycle(message("It is 5."))]
    )
    chat = Chat(script, tools=[add])
    await chat.send("Add 2 and 3")
    assert [e.kind for e in chat.conversation.events if is_scripted(e)] == [
        "tool_call_request",
        "message",
    ]
    model = _Model([cycle(message("Hello, I am a model."))])
    chat.provider = model
    await chat.send("Now for real")
    [request] = model.requests
    assert [(e.kind, getattr(e, "content", None)) for e in request.events] == [
        ("chat_request", "Add 2 and 3"),
        ("chat_request", "Now for real"),
    ]
    assert not is_scripted(chat.conversation.events[-1])  # the model's answer is its own


async def test_a_replay_of_a_scripted_turn_stays_marked_and_a_script_sees_everything() -> None:
    chat = Chat(ScriptedProvider([cycle(message("scripted words"))]))
    result = await chat.send("hello")
    cycles, _ = cycles_of(result.events)
    again = Chat(ReplayProvider(cycles))
    replayed = await again.send("hello")
    assert [is_scripted(e) for e in replayed.events if e.kind == "message"] == [True]
    script = ScriptedProvider([cycle(message("more"))])
    again.provider = script
    await again.send("and a script")
    kinds = [e.kind for e in script.requests[0].events]
    assert kinds == ["chat_request", "message", "chat_request"]
