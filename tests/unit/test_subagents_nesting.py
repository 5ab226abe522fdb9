"""Sub-agents beyond one level and what they share with the calling thread: a sub-agent that
calls a sub-agent, "always allow", a headless run's policy, and ``Chat.as_tool``'s settings."""

from __future__ import annotations

import pytest

from jupyter_turns import Chat, PolicyPrompter, subagent, tool
from jupyter_turns.model.events import ToolCallResponse, Usage
from jupyter_turns.model.prompter import HEADLESS_DENY_REASON, Approval, ApprovalRequest
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.widget.renderer import WidgetSink

from .helpers import page_widget, subagent_totals
from .test_subagents import Priced, lookup


@tool(run="unattended")
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


def _response(events: object, call_id: str) -> ToolCallResponse:
    return next(
        e
        for e in events  # type: ignore[attr-defined]
        if isinstance(e, ToolCallResponse) and e.call_id == call_id
    )


async def test_a_sub_agent_calling_a_sub_agent_marks_each_level_and_adds_up_its_usage() -> None:
    calc_model = Priced(
        [
            cycle(message("Adding."), tool_call("add", {"a": 2, "b": 3}, call_id="toolu_add"),
                  usage=Usage(100, 10)),
            cycle(message("Five."), usage=Usage(200, 20)),
        ]
    )  # fmt: skip
    calc = subagent("calc", "Adds.", tools=[add], provider=calc_model, run="unattended")
    researcher_model = Priced(
        [
            cycle(message("Asking calc."),
                  tool_call("calc", {"request": "2+3"}, call_id="toolu_calc"), usage=Usage(10, 1)),
            cycle(message("It is 5."), usage=Usage(20, 2)),
        ]
    )  # fmt: skip
    researcher = subagent(
        "researcher", "Finds out.", tools=[calc], provider=researcher_model, run="unattended"
    )
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "2+3?"}, call_id="toolu_sub")),
            cycle(message("The answer is 5.")),
        ]
    )
    widget, comm = page_widget()
    sink = WidgetSink(widget)
    turn = await Chat(parent, tools=[researcher], sink=sink).send("What is 2+3?")
    sink.flush()

    # each level's events are marked with the call that ran it, the deepest with calc's
    assert [(e.kind, e.parent) for e in turn] == [
        ("chat_request", None),
        ("tool_call_request", None),
        ("chat_request", "toolu_sub"),
        ("message", "toolu_sub"),
        ("tool_call_request", "toolu_sub"),
        ("chat_request", "toolu_calc"),
        ("message", "toolu_calc"),
        ("tool_call_request", "toolu_calc"),
        ("tool_call_response", "toolu_calc"),
        ("message", "toolu_calc"),
        ("tool_call_response", "toolu_sub"),
        ("message", "toolu_sub"),
        ("tool_call_response", None),
        ("message", None),
    ]
    assert _response(turn, "toolu_add").content == "5"
    assert _response(turn, "toolu_calc").content == "Five."
    assert _response(turn, "toolu_sub").content == "It is 5."
    # calc's usage is its own; the researcher's holds calc's too: the top sees the whole cost
    assert subagent_totals(_response(turn, "toolu_calc").subagent) == {
        "outcome": "complete",
        "cycles": 2,
        "usage": Usage(300, 30).as_dict(),
        "cost_usd": pytest.approx(0.6),
    }
    assert subagent_totals(_response(turn, "toolu_sub").subagent) == {
        "outcome": "complete",
        "cycles": 2,
        "usage": Usage(330, 33).as_dict(),
        "cost_usd": pytest.approx(0.66),
    }

    # the page got each sub-agent's text as its own card's draft, and both cards' live usage
    def streamed(parent: str | None) -> str:
        deltas = comm.custom("delta")
        return "".join(t for m in deltas if m.get("parent") == parent for _, _, t in m["parts"])

    assert streamed("toolu_calc") == "Adding.Five."
    assert streamed("toolu_sub") == "Asking calc.It is 5."
    assert streamed(None) == "The answer is 5."
    released = {m.get("parent") for m in comm.custom("released")}
    assert {"toolu_calc", "toolu_sub"} <= released
    assert widget.tools["toolu_calc"]["subagent"]["cycles"] == 2
    assert widget.tools["toolu_sub"]["subagent"]["cycles"] == 2
    assert [e["id"] for e in widget.events] == [e.id for e in turn]


async def test_always_allow_in_a_nested_turn_is_the_threads() -> None:
    asked: list[str] = []

    def always(request: ApprovalRequest) -> Approval:
        asked.append(request.call_id)
        return Approval("always_allowed", by="user")

    nested = ScriptedProvider(
        [
            cycle(tool_call("lookup", {"city": "Pune"}, call_id="toolu_inner")),
            cycle(message("722.5 mm.")),
        ]
    )
    researcher = subagent(
        "researcher", "Finds facts.", tools=[lookup], provider=nested, run="unattended"
    )
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "Pune?"}, call_id="toolu_sub")),
            cycle(tool_call("lookup", {"city": "Pune"}, call_id="toolu_top")),
            cycle(message("Pune: 722.5 mm.")),
        ]
    )
    chat = Chat(parent, tools=[researcher, lookup], prompter=PolicyPrompter(always))
    turn = await chat.send("Rain in Pune?")
    assert turn.outcome == "complete"
    # the click in the sub-agent's card allowed `lookup` for the whole thread
    assert asked == ["toolu_inner"] and chat.allowed_tools == {"lookup"}
    assert [d.action for d in _response(turn, "toolu_inner").decisions] == ["always_allowed"]
    top = _response(turn, "toolu_top")
    assert top.content == "722.5 mm"
    assert [(d.action, d.by, d.detail) for d in top.decisions] == [
        ("approved", "user", "always allowed by you in this thread")
    ]


async def test_a_nested_ask_in_a_headless_run_is_denied_and_the_caller_goes_on() -> None:
    nested = ScriptedProvider(
        [
            cycle(tool_call("lookup", {"city": "Pune"}, call_id="toolu_inner")),
            cycle(message("I could not look it up.")),
        ]
    )
    researcher = subagent(
        "researcher", "Finds facts.", tools=[lookup], provider=nested, run="unattended"
    )
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "Pune?"}, call_id="toolu_sub")),
            cycle(message("The researcher could not tell.")),
        ]
    )
    turn = await Chat(parent, tools=[researcher], prompter=PolicyPrompter()).send("Rain?")
    inner = _response(turn, "toolu_inner")
    assert inner.status == "skipped" and inner.is_error
    assert [(d.action, d.by, d.detail) for d in inner.decisions] == [
        ("denied", "policy", HEADLESS_DENY_REASON)
    ]
    # the nested model read why, answered, and the calling turn went on with that answer
    sent = nested.requests[1].events[-1]
    assert isinstance(sent, ToolCallResponse) and "headless run" in sent.content
    outer = _response(turn, "toolu_sub")
    assert not outer.is_error and outer.content == "I could not look it up."
    assert turn.outcome == "complete" and turn.text == "The researcher could not tell."


async def test_as_tool_carries_the_chats_model_cycles_and_thinking_unless_given() -> None:
    def looping(count: int) -> ScriptedProvider:
        return ScriptedProvider(
            [cycle(tool_call("lookup", {"city": "Pune"})) for _ in range(count)]
            + [cycle(message("Done."))]
        )

    helper = Chat(looping(3), tools=[lookup], model="claude-x", max_cycles=2, thinking=2048)
    parent = ScriptedProvider(
        [
            cycle(tool_call("researcher", {"request": "go"}, call_id="toolu_sub")),
            cycle(message("Ok.")),
        ]
    )
    researcher = helper.as_tool("researcher", "Finds facts.")
    chat = Chat(parent, tools=[researcher], prompter=PolicyPrompter("allow"))
    turn = await chat.send("go")
    requests = helper.provider.requests  # type: ignore[attr-defined]
    assert [(r.model, r.thinking) for r in requests] == [("claude-x", 2048)] * 2
    outer = _response(turn, "toolu_sub")
    assert outer.subagent["outcome"] == "max_cycles" and outer.subagent["cycles"] == 2
    assert "[researcher did not finish: max_cycles]" in outer.content

    other = Chat(looping(3), tools=[lookup], model="claude-x", max_cycles=2, thinking=2048)
    given = other.as_tool("researcher", "x", model="claude-y", max_cycles=5, thinking="off")
    parent = ScriptedProvider(
        [cycle(tool_call("researcher", {"request": "go"}, call_id="toolu_sub")),
         cycle(message("Ok."))]
    )  # fmt: skip
    turn = await Chat(parent, tools=[given], prompter=PolicyPrompter("allow")).send("go")
    requests = other.provider.requests  # type: ignore[attr-defined]
    assert [(r.model, r.thinking) for r in requests] == [("claude-y", "off")] * 4
    assert _response(turn, "toolu_sub").subagent["outcome"] == "complete"
