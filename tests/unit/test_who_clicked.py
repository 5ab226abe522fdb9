"""Who clicked (issue 32): every answer and Stop carries the identity the page reports; the
kernel sanitizes it (a label any page can forge, never a permission) and saves it with the
decision, the stop notice and the undo event. Records saved before it read as they always did."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_turns import Chat, tool
from jupyter_turns.model.conversation import parse_events
from jupyter_turns.model.events import Decision, Notice, ToolCallResponse, Undo, Who
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.widget.buttons import WidgetPrompter
from jupyter_turns.widget.chat_widget import ChatWidget

from .helpers import until

ADA = {"name": "Ada Lovelace", "username": "ada"}


@pytest.mark.parametrize(
    ("sent", "saved"),
    [
        (ADA, Who(name="Ada Lovelace", username="ada")),
        ({"name": "", "username": "ada"}, Who(name="ada", username="ada")),
        ({"name": "  Ada\n\u202eLovelace\u200b ", "username": 7}, Who(name="Ada Lovelace")),
        ({"name": "x" * 500}, Who(name="x" * 80)),
        ({"name": "\n\t", "username": ""}, None),
        ("Ada", None),
        (None, None),
    ],
)
def test_the_page_s_identity_is_saved_as_plain_capped_text(sent: object, saved: Who | None) -> None:
    assert Who.from_page(sent) == saved


def test_a_decision_or_undo_saved_before_who_existed_still_reads_and_saves_the_same() -> None:
    old = {"action": "approved", "by": "user"}
    assert Decision.model_validate(old).who is None
    assert "who" not in Decision.model_validate(old).model_dump(mode="json")
    undo = Undo(call_id="c1", tool="insert_cell", who=Who(name="Ada Lovelace"))
    record = {"version": 2, "conversation_id": "c", "events": [undo.model_dump(mode="json")]}
    [read] = parse_events(record)
    assert isinstance(read, Undo) and read.who == Who(name="Ada Lovelace")


@tool
def lookup(q: str) -> str:
    return f"result for {q}"


@tool(run="unattended")
async def slow(q: str) -> str:
    await asyncio.sleep(30)
    return "late"


def _answer(widget: ChatWidget, **fields: Any) -> None:
    """What the page sends for the one open prompt (the widget's own dispatch, no kernel)."""
    [prompt] = widget.prompts
    widget._dispatch({"type": prompt["type"], "prompt_id": prompt["id"], **fields})


async def test_an_approval_saves_who_clicked_and_closes_the_prompt_for_every_page() -> None:
    widget = ChatWidget()
    provider = ScriptedProvider([cycle(tool_call("lookup", {"q": "x"})), cycle(message("ok"))])
    chat = Chat(provider=provider, tools=[lookup], prompter=WidgetPrompter(widget))
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: bool(widget.prompts))
    hostile = {"name": "Eve<script>\nx", "username": "eve"}
    _answer(widget, action="approved", who=hostile)
    turn = await asyncio.wait_for(task, 10)
    [response] = [e for e in turn if isinstance(e, ToolCallResponse)]
    assert [(d.action, d.who) for d in response.decisions] == [
        ("approved", Who(name="Eve<script> x", username="eve"))
    ]
    assert widget.prompts == []  # the synced trait every view draws: closed everywhere


async def test_a_stop_names_who_clicked_it_and_each_cancelled_call_says_so() -> None:
    widget = ChatWidget()
    provider = ScriptedProvider([cycle(tool_call("slow", {"q": "x"})), cycle(message("ok"))])
    chat = Chat(provider=provider, tools=[slow], prompter=WidgetPrompter(widget))
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: chat.turn is not None and chat.turn.state.name == "EXECUTING")
    chat.interrupt("stop", who=Who.from_page(ADA))
    turn = await asyncio.wait_for(task, 10)
    notices = [e.text for e in turn if isinstance(e, Notice)]
    assert notices == ["Stopped by Ada Lovelace while tools were running."]
    [response] = [e for e in turn if isinstance(e, ToolCallResponse)]
    assert [(d.action, d.who) for d in response.decisions] == [
        ("approved", None),  # unattended: the policy's, nobody clicked
        ("cancelled", Who(name="Ada Lovelace", username="ada")),
    ]
