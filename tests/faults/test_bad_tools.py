"""Badly behaved tools: the turn goes on, the model gets a clear result, nothing floods."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging

import pytest

from jupyter_turns import Chat, RecordingSink, tool
from jupyter_turns.model.events import ToolCallResponse
from jupyter_turns.model.sink import ToolUpdate
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call


def _chat(*tools: object, sink: RecordingSink | None = None, **kw: object) -> Chat:
    names = [t.name for t in tools]  # type: ignore[attr-defined]
    provider = ScriptedProvider(
        [cycle(*(tool_call(n, {}, call_id=f"c_{n}") for n in names)), cycle(message("ok"))]
    )
    return Chat(provider=provider, tools=tools, run_mode="unattended", sink=sink, **kw)  # type: ignore[arg-type]


def _responses(turn: object) -> dict[str, ToolCallResponse]:
    return {e.call_id: e for e in turn if isinstance(e, ToolCallResponse)}  # type: ignore[attr-defined]


async def test_raising_hanging_and_huge_tools_do_not_stop_the_turn() -> None:
    @tool
    def raises() -> str:
        raise ValueError("bad input from the tool")

    @tool(timeout=0.05)
    async def hangs() -> str:
        await asyncio.sleep(3600)
        return "never"

    @tool
    def huge() -> str:
        return "x" * 10_000_000

    turn = await _chat(raises, hangs, huge).send("go")
    got = _responses(turn)
    assert (
        got["c_raises"].is_error
        and "ValueError: bad input from the tool" in got["c_raises"].content
    )
    assert got["c_hangs"].status == "timeout" and "Timed out after 0.05 s" in got["c_hangs"].content
    content = got["c_huge"].content
    assert len(content) < 101_000  # truncated for the model (and so for the display)
    assert "showing 100,000 of 10,000,000 characters" in content
    assert turn.outcome == "complete" and turn.events[-1].kind == "message"


async def test_non_string_results_are_serialized_sensibly() -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    class Opaque:
        def __repr__(self) -> str:
            return "<Opaque thing>"

    @tool
    def point() -> Point:
        return Point(1, 2)

    @tool
    def when() -> dict[str, object]:
        return {"at": datetime.date(2026, 11, 21), "n": [1, 2.5, None, True]}

    @tool
    def opaque() -> object:
        return Opaque()

    @tool
    def nothing() -> None:
        return None

    got = _responses(await _chat(point, when, opaque, nothing).send("go"))
    assert got["c_point"].content == '{"x": 1, "y": 2}'
    assert (
        got["c_when"].content == '{"at": "datetime.date(2026, 11, 21)", "n": [1, 2.5, null, true]}'
    )
    assert got["c_opaque"].content == "<Opaque thing>"
    assert got["c_nothing"].content == "(no output)"


async def test_prints_go_to_the_tool_card_not_the_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @tool
    def chatty() -> str:
        print("step one")
        print("step two", flush=True)
        import sys

        print("warning!", file=sys.stderr)
        return "done"

    @tool
    async def chatty_async() -> str:
        print("async step")
        return "done"

    sink = RecordingSink()
    print("before the turn")
    await _chat(chatty, chatty_async, sink=sink).send("go")
    print("after the turn")
    lines = {
        (u.call_id, line)
        for u in sink.updates
        if isinstance(u, ToolUpdate) and u.output
        for line in u.output.lines()
    }
    assert ("c_chatty", "step one") in lines and ("c_chatty", "step two") in lines
    assert ("c_chatty", "[stderr] warning!") in lines
    assert ("c_chatty_async", "async step") in lines
    out, err = capsys.readouterr()
    assert "step one" not in out and "async step" not in out and "warning!" not in err
    assert "before the turn" in out and "after the turn" in out


async def test_no_secret_in_logs(caplog: pytest.LogCaptureFixture) -> None:
    from jupyter_turns.providers.anthropic import AnthropicProvider

    secret = "sk-ant-api03-LOGSECRET-0123456789"
    caplog.set_level(logging.DEBUG)
    provider = AnthropicProvider(api_key=secret, base_url="http://127.0.0.1:9")  # nothing listens
    chat = Chat(provider=provider, sleep=lambda s: asyncio.sleep(0), thinking="off")
    turn = await chat.send("hello")
    assert turn.outcome == "error"
    text = caplog.text + repr(provider) + repr(turn.events) + str(chat.conversation.to_record())
    assert secret not in text
