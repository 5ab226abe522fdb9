"""Configuring MCP servers: ServerSpec's checks and saved form, ChatMagics.mcp_servers, the
``%chat mcp`` commands and a ``%%chat`` cell in plain IPython (a real stdio server), what a
thread saves, and what a notebook may not grant itself."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from pydantic import ValidationError
from traitlets import TraitError

from jupyter_turns.errors import McpServerError
from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.mcp import McpServers, ServerSpec, require_sdk
from jupyter_turns.record.thread_settings import (
    UserDefaults,
    describe_guarded,
    parse_settings,
    split_settings,
)
from tests.support.mcp_server import SCRIPT

COMMAND = [sys.executable, str(SCRIPT)]
SHOWN = f"stdio: {shlex.join(COMMAND)}"  # the whole command line


# ---------------------------------------------------------------- ServerSpec


def test_a_spec_takes_the_usual_json_shape_and_saves_no_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdio = ServerSpec.model_validate(
        {"command": "/opt/bin/python3", "args": ["files.py", "--root", "data"], "env": ["TOKEN"]}
    )
    assert stdio.command == ["/opt/bin/python3", "files.py", "--root", "data"]
    assert stdio.describe() == "stdio: /opt/bin/python3 files.py --root data · env TOKEN"
    assert stdio.saved() == {"command": stdio.command, "env": ["TOKEN"]}
    monkeypatch.setenv("TOKEN", "s3cret")
    assert stdio.environment() == {"TOKEN": "s3cret"}

    web = ServerSpec(
        url="https://tracker.example/mcp?key=s3cret",
        headers={"Authorization": "Bearer ${TRACKER}", "X-Team": "TEAM"},
        run="unattended",
        timeout=30,
    )
    assert web.saved() == {
        "url": "https://tracker.example/mcp",  # the query may hold a token: never saved
        "incomplete": True,
        "headers": {"Authorization": "Bearer ${TRACKER}", "X-Team": "TEAM"},
        "run": "unattended",
        "timeout": 30,
    }
    monkeypatch.setenv("TRACKER", "t0ken")
    monkeypatch.delenv("TEAM", raising=False)
    with pytest.raises(McpServerError, match=r"TEAM \(header X-Team\) is not set in this kernel"):
        web.header_values()
    monkeypatch.setenv("TEAM", "blue")
    assert web.header_values() == {"Authorization": "Bearer t0ken", "X-Team": "blue"}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"url": "https://me:pw@host/mcp"}, "the url holds credentials"),
        ({"url": "https://host/mcp", "headers": {"X-Key": "sk-123-abc"}}, "never the value"),
        ({"command": ["x"], "env": {"TOKEN": "s3cret"}}, "env"),
        ({"command": ["x"], "url": "https://host/mcp"}, "either a command"),
        ({}, "either a command"),
        ({"url": "file:///etc/passwd"}, "http:// or https://"),
        ({"command": ["x"], "headers": {"A": "B"}}, "headers are for HTTP servers"),
        ({"command": ["x"], "run": "always"}, "run"),
        ({"command": ["x"], "timeout": 0}, "timeout"),
    ],
)
def test_a_wrong_spec_is_refused(raw: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        ServerSpec.model_validate(raw)


# ---------------------------------------------------------------- the magic (plain IPython)


@pytest.fixture
def magics(
    magics: ChatMagics, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ChatMagics:  # conftest's, with the test server's log
    monkeypatch.setenv("MCP_TEST_LOG", str(tmp_path / "server.log"))
    return magics


async def _mcp(magics: ChatMagics, line: str) -> None:
    await magics.chat(f"mcp {line}")


def test_chatmagics_mcp_servers_is_checked_when_it_is_set(magics: ChatMagics) -> None:
    with pytest.raises(
        TraitError, match=r"ChatMagics.mcp_servers\['w'\]: the url must be http:// or https://"
    ):
        magics.mcp_servers = {"w": {"url": "ftp://host"}}
    with pytest.raises(TraitError, match="server name 'a__b'"):
        magics.mcp_servers = {"a__b": {"command": ["x"]}}
    assert magics.mcp_servers == {}


async def test_mcp_commands_and_a_chat_cell_that_calls_a_server(
    magics: ChatMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    command = " ".join(COMMAND)
    await _mcp(magics, f"add t --env MCP_TEST_LOG --run unattended -- {command}")
    await _mcp(magics, "list")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"Added MCP server 't' ({SHOWN} · env MCP_TEST_LOG · run: unattended). It starts when "
        "a chat first uses "
        "it; its tools are named mcp__t__TOOL."
    )
    assert out[1] == f"t: {SHOWN} · env MCP_TEST_LOG · run: unattended · not started"

    from jupyter_turns.providers.scripted import cycle, message, tool_call

    magics.shell.user_ns["script"] = [
        cycle(tool_call("mcp__t__add", {"a": 20, "b": 22})),
        cycle(message("It is 42.")),
    ]
    await magics.chat("--provider scripted --script script", "Add 20 and 22")
    thread = magics.session.threads.by_name["main"]
    response = thread.chat.conversation.events[-2]
    assert (response.kind, response.content) == ("tool_call_response", "42")  # type: ignore[union-attr]
    assert thread.settings()["mcp_servers"] == {
        "t": {"command": COMMAND, "env": ["MCP_TEST_LOG"], "run": "unattended"}
    }
    capsys.readouterr()
    await _mcp(magics, "list")
    await _mcp(magics, "restart t")
    await _mcp(magics, "remove t")
    await _mcp(magics, "list")
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"t: {SHOWN} · env MCP_TEST_LOG · run: unattended · running · 8 tools",
        "Restarted MCP server 't': 8 tools (add, pid, parent, picture, count, wait, crash, "
        "config).",
        "Removed MCP server 't' (closed).",
        "No MCP servers: %chat mcp add NAME -- COMMAND [ARGS...] or %chat mcp add NAME URL",
    ]
    assert thread.mcp_servers == {}  # its next turn does not configure it again


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("add", "usage: %chat mcp"),
        ("add t", "give a URL or `-- COMMAND`"),
        ("add t --", "the command is missing"),
        ("add a__b -- x", "server name 'a__b'"),
        ("add t https://h/mcp --header X-Key", "write NAME=VAR"),
        ("add t https://h/mcp --header X-Key=sk-live-1", "never the value itself"),
        ("add t --run always -- x", "invalid choice"),
        ("remove nobody", "no MCP server named 'nobody'"),
        ("stop t", "usage: %chat mcp"),
    ],
)
async def test_wrong_mcp_commands_say_why(magics: ChatMagics, line: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        await _mcp(magics, line)
    assert magics.session.mcp.specs == {}


async def test_config_changes_are_followed_and_a_removal_sticks(
    magics: ChatMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    magics.mcp_servers = {"a": {"command": ["a-server"]}, "b": {"url": "https://b.example/mcp"}}
    await _mcp(magics, "list")
    magics.mcp_servers = {
        "a": {"command": ["a-server", "--v2"]},
        "b": {"url": "https://b.example/mcp"},
    }
    await _mcp(magics, "remove b")
    await _mcp(magics, "list")
    magics.mcp_servers = {"a": {"command": ["a-server", "--v2"]}}
    await _mcp(magics, "list")
    assert capsys.readouterr().out.splitlines() == [
        "a: stdio: a-server · not started",
        "b: http: https://b.example/mcp · not started",
        "Removed MCP server 'b'.",
        "a: stdio: a-server --v2 · not started",
        "a: stdio: a-server --v2 · not started",
    ]


async def test_without_the_sdk_the_message_says_how_to_install_it(
    magics: ChatMagics, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what `import mcp` does when it is missing
    with pytest.raises(McpServerError, match=r"pip install 'jupyter_turns\[mcp\]'"):
        require_sdk()
    with pytest.raises(UsageError, match=r"not installed here \(mcp\): pip install"):
        await _mcp(magics, "add t -- x")
    servers = McpServers()
    await servers.add("t", ServerSpec(command=["x"]))
    assert await servers.tools() == (
        [],
        [
            "MCP servers need the mcp package, which is not installed here (mcp): pip install "
            "'jupyter_turns[mcp]', then restart the kernel (configured: t)"
        ],
    )


def test_a_server_is_described_whole_as_a_shell_would_read_it() -> None:
    """What a person reads before a server starts is all it would be given: the program's path
    and every argument (a carriage return or a terminal escape in one could hide the rest of
    the line on the screen), each header with the variable it reads, never a secret."""
    words = ["/tmp/x/python3", "s.py", "--root", "my data", "a\rb\x1b[2K", "it's\\x", "\n"]
    stdio = ServerSpec(command=words, env=["GITHUB_TOKEN"], run="unattended")
    described = stdio.describe()
    assert described == (
        "stdio: /tmp/x/python3 s.py --root 'my data' $'a\\rb\\x1b[2K' 'it'\"'\"'s\\x' $'\\n'"
        " · env GITHUB_TOKEN · run: unattended"
    )
    assert described.isprintable()
    line = described.removeprefix("stdio: ").split(" · ")[0]
    read = subprocess.run(
        ["bash", "-c", f"for a in {line}; do printf '%s\\x1f' \"$a\"; done"],
        capture_output=True,
        check=True,
    )
    assert read.stdout.decode().split("\x1f")[:-1] == words  # bash reads back the very words
    key = "sk-ant-api03-" + "k" * 40
    http = ServerSpec(
        url="https://t.example/mcp?team=7&token=t0ken",
        headers={"Authorization": "Bearer ${ANTHROPIC_API_KEY}", "X-Key": "TRACKER"}
        | {"X-Both": f"{key} ${{X}}"},  # a reference beside a literal: it validates
    )
    assert http.describe() == (
        "http: https://t.example/mcp?team=7&token=… · header Authorization: Bearer "
        "${ANTHROPIC_API_KEY} · header X-Key: ${TRACKER} · header X-Both: "
        "[redacted: Anthropic key] ${X}"
    )


# ---------------------------------------------------------------- what a notebook saves


def test_saved_servers_need_trust_and_are_named() -> None:
    saved = {
        "mcp_servers": {
            "files": {"command": ["/usr/bin/python3", "files.py"], "run": "unattended"},
            "tracker": {"url": "https://t.example/mcp", "headers": {"A": "Bearer ${T}"}},
        }
    }
    settings = parse_settings(saved)
    assert settings.problems == [] and settings.values == saved
    harmless, guarded = split_settings(settings.values, UserDefaults(max_cycles=25))
    assert harmless == {} and guarded == saved
    assert describe_guarded(guarded) == (
        "MCP servers `files` (stdio: /usr/bin/python3 files.py · run: unattended), `tracker` "
        "(http: https://t.example/mcp · header A: Bearer ${T})"
    )
    crafted = parse_settings({"mcp_servers": {"x": {"command": ["x"], "env": {"K": "v"}}}})
    assert crafted.values == {} and "mcp_servers ignored" in crafted.problems[0]


# ---------------------------------------------------------------- a server's schema


def test_a_schema_is_checked_with_its_own_refs_and_never_fetches_others() -> None:
    import http.server
    import threading

    from mcp.types import Tool as McpToolInfo

    from jupyter_turns.mcp.connection import Connection
    from jupyter_turns.mcp.mcp_tool import server_tools
    from jupyter_turns.tools.registry import ToolArgumentError

    fetched: list[str] = []

    class Schemas(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

    web = http.server.HTTPServer(("127.0.0.1", 0), Schemas)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        nested = {"$ref": "#/$defs/Point"}
        defs = {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        remote = {"$ref": f"http://127.0.0.1:{web.server_port}/int.json"}
        infos = [
            McpToolInfo(
                name="plot",
                input_schema={"type": "object", "properties": {"p": nested}, "$defs": defs},
            ),
            McpToolInfo(name="far", input_schema={"type": "object", "properties": {"n": remote}}),
            McpToolInfo(
                name="bad", input_schema={"type": "object", "properties": {"n": {"type": 5}}}
            ),
            McpToolInfo(name="odd.name/v2", input_schema={"type": "object"}),
        ]
        connection = Connection("s", ServerSpec(command=["s"]))  # never started here
        tools, notes = server_tools("s", infos, lambda name: connection)
        plot, far, odd = tools
        assert odd.name == "mcp__s__odd_name_v2" and odd.remote == "odd.name/v2"
        assert notes == [
            "MCP server 's': tool 'bad' is not offered: its input schema is not valid JSON "
            "Schema (5 is not valid under any of the given schemas)"
        ]
        assert plot.validate({"p": {"x": 1}}) == {"arguments": {"p": {"x": 1}}}
        with pytest.raises(ToolArgumentError, match=r"p\.x: 'one' is not of type 'integer'"):
            plot.validate({"p": {"x": "one"}})
        with pytest.raises(ToolArgumentError, match="the server's schema cannot be checked"):
            far.validate({"n": 1})
        assert fetched == []  # a schema never makes the kernel fetch a URL
    finally:
        web.shutdown()
        web.server_close()


# ---------------------------------------------------------------- results


def _png(width: int, height: int) -> str:
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 40)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def test_results_map_to_text_and_images_like_a_local_tools() -> None:
    from mcp import types

    from jupyter_turns.mcp.result_blocks import tool_result
    from jupyter_turns.tools.results import ToolFailed

    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="Two files:"),
            types.ImageContent(type="image", data=_png(20, 10), mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="file:///notes.md", mime_type="text/markdown", text="# Notes"
                ),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///plot.png", mime_type="image/png", blob=_png(30, 30)
                ),
            ),
            types.ResourceLink(type="resource_link", uri="file:///big.csv", name="big.csv"),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
        ]
    )
    converted = tool_result(result)
    assert converted.text.splitlines() == [
        "Two files:",
        "[resource file:///notes.md]",
        "# Notes",
        "[resource link: file:///big.csv (big.csv)]",
        "[not sent to the model: Unsupported MCP content type: audio]",
    ]
    assert [(i.width, i.label) for i in converted.images] == [
        (20, "1 from the MCP server"),
        (30, "resource file:///plot.png"),
    ]
    structured = types.CallToolResult(content=[], structured_content={"rows": 3})
    assert tool_result(structured).text == '{"rows": 3}'
    failed = types.CallToolResult(
        content=[types.TextContent(type="text", text="no such table")], is_error=True
    )
    with pytest.raises(ToolFailed, match=r"^no such table$"):
        tool_result(failed)
