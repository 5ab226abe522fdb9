"""Approval integrity: an `ask` tool runs only on an approval of that exact prompt, once."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_turns import Chat, tool
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.widget.buttons import WidgetPrompter
from jupyter_turns.widget.chat_widget import ChatWidget
from jupyter_turns.widget.renderer import WidgetSink
from tests.unit.helpers import until


def _page(widget: ChatWidget, content: dict[str, Any]) -> None:
    """A message from the page, as the comm would deliver it (possibly from another thread)."""
    widget._on_custom(widget, content, [])


def _setup(calls: list[dict[str, Any]], script: list[Any]) -> tuple[Chat, ChatWidget]:
    @tool
    def transfer(amount: int, to: str) -> str:
        """Move money."""
        calls.append({"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    widget = ChatWidget()
    widget.bind(asyncio.get_running_loop())
    chat = Chat(
        provider=ScriptedProvider(script),
        tools=[transfer],
        sink=WidgetSink(widget),
        prompter=WidgetPrompter(widget),
    )
    return chat, widget


def _prompt(widget: ChatWidget) -> dict[str, Any] | None:
    return next((p for p in widget.prompts if p["type"] == "approval"), None)


async def test_nothing_runs_without_an_approval_of_that_prompt() -> None:
    calls: list[dict[str, Any]] = []
    script = [cycle(tool_call("transfer", {"amount": 5, "to": "bob"})), cycle(message("ok"))]
    chat, widget = _setup(calls, script)
    task = asyncio.create_task(chat.send("pay bob"))
    await until(lambda: _prompt(widget) is not None)
    prompt = _prompt(widget)
    assert prompt is not None
    for stale in ("p1-0", f"{prompt['id']}x", "", None):
        _page(widget, {"type": "approval", "prompt_id": stale, "action": "approved"})
    _page(
        widget, {"type": "result", "prompt_id": prompt["id"], "action": "delivered"}
    )  # wrong type
    for _ in range(50):
        await asyncio.sleep(0)
    assert calls == [] and not task.done()
    _page(widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"})
    _page(widget, {"type": "approval", "prompt_id": prompt["id"], "action": "approved"})  # double
    await task
    assert calls == [{"amount": 5, "to": "bob"}]


async def test_an_approval_from_an_earlier_turn_or_another_widget_is_rejected() -> None:
    calls: list[dict[str, Any]] = []
    script = [
        cycle(tool_call("transfer", {"amount": 1, "to": "a"})),
        cycle(message("one")),
        cycle(tool_call("transfer", {"amount": 2, "to": "b"})),
        cycle(message("two")),
    ]
    chat, first = _setup(calls, script)
    task = asyncio.create_task(chat.send("first"))
    await until(lambda: _prompt(first) is not None)
    old = _prompt(first)
    assert old is not None
    _page(first, {"type": "approval", "prompt_id": old["id"], "action": "approved"})
    await task
    # the next cell gets its own widget; the old prompt id and the old widget are dead
    second = ChatWidget()
    second.bind(asyncio.get_running_loop())
    chat.sink, chat.prompter = WidgetSink(second), WidgetPrompter(second)
    task = asyncio.create_task(chat.send("second"))
    await until(lambda: _prompt(second) is not None)
    current = _prompt(second)
    assert current is not None
    _page(second, {"type": "approval", "prompt_id": old["id"], "action": "approved"})
    _page(first, {"type": "approval", "prompt_id": current["id"], "action": "approved"})
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(calls) == 1 and not task.done()
    _page(second, {"type": "approval", "prompt_id": current["id"], "action": "skipped"})
    await task
    assert len(calls) == 1


async def test_edited_arguments_are_validated_before_they_run() -> None:
    calls: list[dict[str, Any]] = []
    script = [cycle(tool_call("transfer", {"amount": 5, "to": "bob"})), cycle(message("ok"))]
    chat, widget = _setup(calls, script)
    task = asyncio.create_task(chat.send("pay"))
    await until(lambda: _prompt(widget) is not None)
    prompt = _prompt(widget)
    assert prompt is not None
    bad = {"amount": "lots", "to": "eve"}
    _page(
        widget,
        {"type": "approval", "prompt_id": prompt["id"], "action": "edited", "arguments": bad},
    )
    await until(lambda: (p := _prompt(widget)) is not None and p["id"] != prompt["id"])
    again = _prompt(widget)
    assert again is not None and "amount" in again["error"] and calls == []
    good = {"amount": 3, "to": "carol"}
    _page(
        widget,
        {"type": "approval", "prompt_id": again["id"], "action": "edited", "arguments": good},
    )
    await task
    assert calls == [good]


async def test_clicks_from_another_thread_are_handled_on_the_loop() -> None:
    calls: list[dict[str, Any]] = []
    script = [cycle(tool_call("transfer", {"amount": 9, "to": "x"})), cycle(message("ok"))]
    chat, widget = _setup(calls, script)
    task = asyncio.create_task(chat.send("pay"))
    await until(lambda: _prompt(widget) is not None)
    prompt = _prompt(widget)
    assert prompt is not None
    click = {"type": "approval", "prompt_id": prompt["id"], "action": "approved"}
    await asyncio.to_thread(_page, widget, click)  # as from a subshell thread
    await task
    assert calls == [{"amount": 9, "to": "x"}]
