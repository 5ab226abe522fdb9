"""Sub-agents: a tool whose call runs a nested turn, drawn and saved inside the calling turn."""

from __future__ import annotations

import asyncio
import json

import pytest

from jupyter_turns import Chat, PolicyPrompter, RecordingSink, subagent, tool
from jupyter_turns.errors import ProviderError
from jupyter_turns.model.conversation import Conversation
from jupyter_turns.model.events import ToolCallResponse, Usage
from jupyter_turns.model.interrupt import InterruptAction
from jupyter_turns.model.sink import SubagentUpdate
from jupyter_turns.providers.anthropic_wire import anthropic_messages
from jupyter_turns.providers.scripted import Fail, ScriptedProvider, cycle, message, tool_call

from .helpers import subagent_totals, until


@tool(run="ask")
def lookup(city: str) -> str:
    """Rainfall of a city.

    Args:
        city: the city.
    """
    return {"Pune": "722.5 mm"}.get(city, "unknown")


class Priced(ScriptedProvider):
    """A scripted model with a price (a tenth of a cent an input token, a cent an output one),
    so that a summary's cost can be checked."""

    def cost(self, usage: Usage, model: str | None) -> float | None:
        return usage.input_tokens / 1000 + usage.output_tokens / 100


def _outer(turn: object) -> ToolCallResponse:
    """The calling turn's response to its sub-agent call."""
    return next(
        e
        for e in turn  # type: ignore[attr-defined]
        if isinstance(e, ToolCallResponse) and e.parent is None
    )


def _nested_script() -> ScriptedProvider:
    return ScriptedProvider(
        [
            cycle(tool_call("lookup", {"city": "Pune"}, call_id="toolu_inner")),
            cycle(message("Pune: **722.5 mm**.")),
        ]
    )


async def test_a_sub_agent_runs_a_nested_turn_whose_events_are_kept_but_not_sent() -> None:
    nested = _nested_script()
    researcher = subagent(
        "researcher", "Finds facts.", tools=[lookup], provider=nested, run="unattended"
    )
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "Rainiest city?"}, call_id="toolu_sub")),
            cycle(message("It is Pune.")),
        ]
    )
    sink = RecordingSink()
    chat = Chat(parent, tools=[researcher], prompter=PolicyPrompter("allow"), sink=sink)
    turn = await chat.send("Which city is rainiest?")

    kinds = [(e.kind, e.parent) for e in turn]
    assert kinds == [
        ("chat_request", None),
        ("tool_call_request", None),
        ("chat_request", "toolu_sub"),
        ("tool_call_request", "toolu_sub"),
        ("tool_call_response", "toolu_sub"),
        ("message", "toolu_sub"),
        ("tool_call_response", None),
        ("message", None),
    ]
    response = turn.events[6]
    assert isinstance(response, ToolCallResponse)
    assert response.content == "Pune: **722.5 mm**."  # only the final answer goes back
    assert response.subagent["outcome"] == "complete" and response.subagent["cycles"] == 2
    inner = turn.events[4]
    assert isinstance(inner, ToolCallResponse) and inner.content == "722.5 mm"
    assert [d.by for d in inner.decisions] == ["policy"]  # the nested ask used the prompter
    # the calling model never sees the nested events
    sent = json.dumps(anthropic_messages(parent.requests[1].events))
    assert "toolu_inner" not in sent and "Rainiest city?" in sent
    assert "Pune: **722.5 mm**." in sent
    # the nested turn's requests were its own conversation
    assert [e.kind for e in nested.requests[0].events] == ["chat_request"]
    # live: the sink saw the nested tool's status and the sub-agent's usage per cycle
    assert [u.cycles for u in sink.updates if isinstance(u, SubagentUpdate)] == [1, 2]
    # the record reads back into a conversation valid to send
    again = Conversation.from_record(chat.conversation.to_record())
    again.check_sendable()
    assert [e.id for e in again.events] == [e.id for e in chat.conversation.events]


async def test_a_nested_failure_is_an_error_result_that_keeps_the_sub_agents_usage() -> None:
    @tool(run="unattended")
    def pick() -> str:
        """Pick."""
        return "picked"

    fatal = ProviderError("Anthropic API error 401: invalid key", kind="auth", retryable=False)
    broken = Priced(
        [cycle(tool_call("pick", {}, call_id="toolu_pick"), usage=Usage(200, 10)), [Fail(fatal)]]
    )
    researcher = subagent(
        "researcher", "Finds facts.", tools=[pick], provider=broken, run="unattended"
    )
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "x"}, call_id="toolu_sub")),
            cycle(message("Could not find out.")),
        ]
    )
    chat = Chat(parent, tools=[researcher], max_cycles=3)
    turn = await chat.send("go")
    response = _outer(turn)
    assert response.is_error and "researcher failed" in response.content
    assert "invalid key" in response.content
    # the tokens of the cycle that did run were spent: the failed call still says so
    assert subagent_totals(response.subagent) == {
        "outcome": "failed",
        "cycles": 2,
        "usage": Usage(200, 10).as_dict(),
        "cost_usd": pytest.approx(0.3),
    }
    assert turn.outcome == "complete" and turn.text.endswith("Could not find out.")


async def test_stop_on_the_caller_stops_the_nested_turn_and_keeps_its_partial_work() -> None:
    gate = asyncio.Event()

    @tool(run="unattended")
    async def slow() -> str:
        """Wait."""
        await gate.wait()
        return "late"

    nested = Priced(
        [
            cycle(
                message("Working on it."),
                tool_call("slow", {}, call_id="toolu_slow"),
                usage=Usage(120, 30),
            )
        ]
    )
    researcher = subagent("researcher", "x", tools=[slow], provider=nested, run="unattended")
    parent = ScriptedProvider(
        [cycle(tool_call("researcher", {"request": "x"}, call_id="toolu_sub"))]
    )
    chat = Chat(parent, tools=[researcher], cancel_grace=5)
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: any(getattr(e, "parent", None) for e in chat.conversation.events[2:])
                and any(e.kind == "tool_call_request" and getattr(e, "call_id", "") == "toolu_slow"
                        for e in chat.conversation.events), spins=10**6)  # fmt: skip
    chat.interrupt(InterruptAction.STOP)
    turn = await asyncio.wait_for(task, 10)
    assert turn.outcome == "stopped"
    nested_events = [e for e in turn if e.parent == "toolu_sub"]
    assert [e.kind for e in nested_events][:3] == ["chat_request", "message", "tool_call_request"]
    slow_response = next(e for e in nested_events if e.kind == "tool_call_response")
    assert slow_response.status == "cancelled"
    outer = _outer(turn)
    assert outer.status == "cancelled"
    # what the sub-agent spent before the Stop is saved on the cancelled response
    assert subagent_totals(outer.subagent) == {
        "outcome": "stopped",
        "cycles": 1,
        "usage": Usage(120, 30).as_dict(),
        "cost_usd": pytest.approx(0.42),
    }
    chat.conversation.check_sendable()
    Conversation.from_record(chat.conversation.to_record()).check_sendable()


async def test_as_tool_uses_the_chats_provider_and_tools() -> None:
    helper = Chat(_nested_script(), tools=[lookup], system="Be exact.")
    researcher = helper.as_tool("researcher", "Finds facts.")
    assert researcher.name == "researcher" and "request" in researcher.schema["properties"]
    parent = ScriptedProvider(
        [cycle(tool_call("researcher", {"request": "Rainiest?"})), cycle(message("Pune."))]
    )
    turn = await Chat(parent, tools=[researcher], run_mode="unattended",
                      prompter=PolicyPrompter("allow")).send("go")  # fmt: skip
    assert turn.outcome == "complete"
    nested_request = helper.provider.requests[0]  # type: ignore[attr-defined]
    assert nested_request.system == "Be exact."


async def test_a_restarted_call_counts_the_usage_of_every_attempt() -> None:
    gate = asyncio.Event()

    @tool(run="unattended")
    async def stuck() -> str:
        """Wait."""
        await gate.wait()
        return "late"

    nested = Priced(
        [
            cycle(message("Working."), tool_call("stuck", {}, call_id="toolu_stuck"),
                  usage=Usage(100, 10)),
            cycle(message("Done."), usage=Usage(40, 4)),
        ]
    )  # fmt: skip
    researcher = subagent("researcher", "x", tools=[stuck], provider=nested, run="unattended")
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "x"}, call_id="toolu_sub")),
            cycle(message("Finished.")),
        ]
    )
    chat = Chat(parent, tools=[researcher], cancel_grace=5)
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: any(getattr(e, "call_id", "") == "toolu_stuck"
                            for e in chat.conversation.events), spins=10**6)  # fmt: skip
    chat.interrupt(InterruptAction.RESTART)  # the researcher runs again, from the start
    turn = await asyncio.wait_for(task, 10)
    assert turn.outcome == "complete"
    outer = _outer(turn)
    assert outer.content == "Done." and [d.action for d in outer.decisions][-1] == "restarted"
    # both attempts' events are in the card, and both attempts' tokens in its summary
    assert [e.kind for e in turn if e.parent == "toolu_sub"].count("chat_request") == 2
    assert subagent_totals(outer.subagent) == {
        "outcome": "complete",
        "cycles": 2,
        "usage": Usage(140, 14).as_dict(),
        "cost_usd": pytest.approx(0.28),
    }
