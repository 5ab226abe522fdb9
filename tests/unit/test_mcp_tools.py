"""MCP servers as tools, against real servers written with the SDK's MCPServer: a stdio server
the test's McpServers starts as a subprocess, and the same server over streamable HTTP on
127.0.0.1 (tests/support/mcp_server.py). No part of the SDK is faked."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from jupyter_turns import Chat, PolicyPrompter, RecordingSink
from jupyter_turns.mcp import McpServers, ServerSpec
from jupyter_turns.mcp.connection import ServerState
from jupyter_turns.model.events import Notice, ToolCallResponse
from jupyter_turns.model.sink import ToolUpdate
from jupyter_turns.providers.anthropic_wire import anthropic_messages
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.tools.registry import Tool
from tests.support.mcp_server import SCRIPT, HttpServer, leaked_tokens

STDIO = ServerSpec(command=[sys.executable, str(SCRIPT)], env=["MCP_TEST_LOG"])


@pytest.fixture(scope="module")
def http() -> Iterator[HttpServer]:
    with HttpServer() as server:
        yield server


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What the server saw: the stdio server gets the variable through ``env``, the HTTP
    server (in this process) reads it directly."""
    path = tmp_path / "server.log"
    path.touch()
    monkeypatch.setenv("MCP_TEST_LOG", str(path))
    return path


@pytest.fixture(params=["stdio", "http"])
async def servers(request: pytest.FixtureRequest, log: Path) -> AsyncIterator[McpServers]:
    """Servers with one server named ``t``, over stdio or HTTP."""
    registry = McpServers()
    if request.param == "stdio":
        await registry.add("t", STDIO)
    else:
        await registry.add("t", ServerSpec(url=request.getfixturevalue("http").url))
    yield registry
    await registry.close_all()


async def _tools(servers: McpServers) -> dict[str, Tool]:
    tools, notes = await servers.tools()
    assert notes == []
    return {tool.name: tool for tool in tools}


def _chat(tools: dict[str, Tool], *cycles: object, sink: RecordingSink | None = None) -> Chat:
    script = ScriptedProvider([*cycles, cycle(message("done"))])  # type: ignore[list-item]
    return Chat(provider=script, tools=tools.values(), prompter=PolicyPrompter("allow"), sink=sink)


def _responses(events: object) -> list[ToolCallResponse]:
    return [e for e in events if isinstance(e, ToolCallResponse)]  # type: ignore[attr-defined]


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


async def _logged(path: Path, line: str, within: float = 15.0) -> None:
    """Wait until the server wrote ``line`` (it runs elsewhere: its log is what we can see)."""
    deadline = time.monotonic() + within
    while line not in _lines(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"the server never logged {line!r}: {_lines(path)}")
        await asyncio.sleep(0.01)


# ---------------------------------------------------------------- listing and calls


async def test_tools_are_listed_with_the_servers_schema(servers: McpServers) -> None:
    tools = await _tools(servers)
    assert sorted(tools) == [
        "mcp__t__add", "mcp__t__config", "mcp__t__count", "mcp__t__crash", "mcp__t__parent",
        "mcp__t__picture", "mcp__t__pid", "mcp__t__wait",
    ]  # fmt: skip
    add = tools["mcp__t__add"]
    assert add.schema["properties"] == {
        "a": {"title": "A", "type": "integer"},
        "b": {"title": "B", "type": "integer"},
    }
    assert add.schema["required"] == ["a", "b"]
    assert add.description.startswith("Add two integers.")
    assert add.run is None and add.timeout == 120.0  # the thread's run mode: ask by default
    assert servers.connections["t"].state is ServerState.RUNNING


async def test_arguments_are_checked_against_the_schema_before_the_call(
    servers: McpServers, log: Path
) -> None:
    tools = await _tools(servers)
    chat = _chat(
        tools,
        cycle(tool_call("mcp__t__add", {"a": 1, "b": "two"}), tool_call("mcp__t__add", {"a": 2})),
        cycle(tool_call("mcp__t__add", {"a": 2, "b": 3})),
    )
    turn = await chat.send("add")
    wrong_type, missing, right = _responses(turn.events)
    assert wrong_type.is_error and wrong_type.content == (
        "invalid arguments for mcp__t__add: b: 'two' is not of type 'integer'"
    )
    assert (
        missing.content
        == "invalid arguments for mcp__t__add: (arguments): 'b' is a required property"
    )
    assert (right.is_error, right.content, right.status) == (False, "5", "done")
    assert _lines(log) == ["add 2 3"]  # the wrong calls never reached it


async def test_an_image_result_becomes_an_image_block(servers: McpServers) -> None:
    chat = _chat(await _tools(servers), cycle(tool_call("mcp__t__picture", {"width": 40})))
    turn = await chat.send("draw")
    (response,) = _responses(turn.events)
    (image,) = response.images
    assert (image.media_type, image.width, image.height) == ("image/png", 40, 30)
    (result,) = anthropic_messages(chat.conversation.events)[2]["content"]
    assert result["type"] == "tool_result"
    assert [block["type"] for block in result["content"]] == ["text", "image"]


async def test_tokens_in_a_servers_result_are_withheld_from_the_model_and_the_record(
    servers: McpServers,
) -> None:
    chat = _chat(await _tools(servers), cycle(tool_call("mcp__t__config")))
    turn = await chat.send("show the config")
    (response,) = _responses(turn.events)
    assert response.content == (
        "github: [redacted: GitHub token]\nslack: [redacted: Slack token]\nregion: eu-north-1"
    )
    sent = str(anthropic_messages(chat.conversation.events))
    saved = str(chat.conversation.to_record())
    assert all(token not in sent and token not in saved for token in leaked_tokens())
    (notice,) = [e for e in turn.events if isinstance(e, Notice)]
    assert notice.data == {"redacted": 2, "in": {"mcp__t__config": 2}}


async def test_progress_notifications_become_lines_of_the_tool_card(servers: McpServers) -> None:
    sink = RecordingSink()
    chat = _chat(await _tools(servers), cycle(tool_call("mcp__t__count", {"steps": 3})), sink=sink)
    turn = await chat.send("count")
    assert _responses(turn.events)[0].content == "counted to 3"
    outputs = [u.output for u in sink.updates if isinstance(u, ToolUpdate) and u.output]
    assert outputs[-1].head == ("step 1 (1/3)", "step 2 (2/3)", "step 3 (3/3)")


# ---------------------------------------------------------------- cancellation, timeouts, crashes


async def test_stop_cancels_the_call_and_the_server_sees_it(servers: McpServers, log: Path) -> None:
    chat = _chat(
        await _tools(servers),
        cycle(tool_call("mcp__t__wait", {"label": "a"})),
        cycle(tool_call("mcp__t__add", {"a": 1, "b": 1})),
    )
    running = asyncio.create_task(chat.send("wait"))
    await _logged(log, "wait started a")
    chat.interrupt("stop")
    turn = await running
    (response,) = _responses(turn.events)
    assert (response.status, response.content) == (
        "cancelled",
        "Tool call cancelled by user after it started.",
    )
    await _logged(log, "wait cancelled a")  # the protocol's cancellation reached the server
    # the session outlives the cancelled call: the next turn's call uses the same server
    again = await chat.send("and now add")
    assert _responses(again.events)[0].content == "2"
    assert servers.connections["t"].starts == 1


async def test_the_servers_timeout_applies(log: Path) -> None:
    servers = McpServers()
    await servers.add("t", STDIO.model_copy(update={"timeout": 0.5}))
    try:
        chat = _chat(await _tools(servers), cycle(tool_call("mcp__t__wait", {"label": "t"})))
        turn = await chat.send("wait")
        (response,) = _responses(turn.events)
        assert (response.status, response.content) == ("timeout", "Timed out after 0.5 s.")
        await _logged(log, "wait cancelled t")
    finally:
        await servers.close_all()


async def test_a_server_that_crashes_mid_call_is_restarted_by_the_next_call(log: Path) -> None:
    servers = McpServers()
    await servers.add("t", STDIO)
    try:
        chat = _chat(
            await _tools(servers),
            cycle(tool_call("mcp__t__pid", {})),
            cycle(tool_call("mcp__t__crash", {})),
            cycle(tool_call("mcp__t__pid", {})),
        )
        turn = await chat.send("crash it")
        before, crashed, after = _responses(turn.events)
        assert crashed.is_error and crashed.status == "error"
        assert crashed.content.startswith(
            "The MCP server 't' failed: its connection closed during the call (it is "
            "restarted on the next call). Its last error output:\n"
            "about to crash: the test asked for it"
        )
        notices = [e.text for e in turn.events if isinstance(e, Notice)]
        said = crashed.content.removeprefix("The MCP server 't' failed: ")
        assert notices == [f"MCP server 't': {said}"]  # the user is told in the transcript
        assert not after.is_error and after.content != before.content  # a new process
        assert servers.connections["t"].starts == 2
    finally:
        await servers.close_all()


async def test_a_server_that_cannot_start_is_a_notice(log: Path, tmp_path: Path) -> None:
    servers = McpServers()
    missing = tmp_path / "no-such-program"
    await servers.add("gone", ServerSpec(command=[str(missing)]))
    dies = "import sys; print('bad config', file=sys.stderr); sys.exit(2)"
    await servers.add("dies", ServerSpec(command=[sys.executable, "-c", dies]))
    tools, notes = await servers.tools()
    assert tools == []
    assert notes[0].startswith(
        "MCP server 'dies': it could not be started: Connection closed. Its last error "
        "output:\nbad config"
    )
    assert notes[1] == (
        f"MCP server 'gone': it could not be started: command not found: {missing} "
        "(no tools offered)"
    )
    assert notes[0].endswith("(no tools offered)")
    await servers.close_all()


async def test_closing_stops_the_server_process(log: Path) -> None:
    servers = McpServers()
    await servers.add("t", STDIO)
    chat = _chat(await _tools(servers), cycle(tool_call("mcp__t__pid", {})))
    pid = int(_responses((await chat.send("pid")).events)[0].content)
    os.kill(pid, 0)  # running
    await servers.close_all()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_server_that_never_answers_cannot_hang_a_turn(log: Path) -> None:
    servers = McpServers()
    silent = "import sys, time; print('hello?', file=sys.stderr, flush=True); time.sleep(30)"
    await servers.add("mute", ServerSpec(command=[sys.executable, "-c", silent]))
    connection = servers.connection("mute")
    assert connection is not None
    connection.start_timeout = 0.5  # 30 s by default
    try:
        tools, notes = await servers.tools()
        assert tools == []
        assert notes == [
            "MCP server 'mute': it could not be started: it did not start within 0.5 s. Its "
            "last error output:\nhello? (no tools offered)"
        ]
        assert connection.status() == "failed: it did not start within 0.5 s"
    finally:
        await servers.close_all()
