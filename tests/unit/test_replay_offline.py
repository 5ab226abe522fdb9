"""``replay = "on"`` touches no network: with an API key set and every socket connection
refused, a chat cell replays its saved turn through the magic, and no connection is tried."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from jupyter_turns import Chat
from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.kernel.replay import ENV
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.tools.registry import tool

from .helpers import record_of, write_notebook

RAN: list[int] = []


@tool(run="unattended")
def double(x: int) -> int:
    """Double x."""
    RAN.append(x)
    return 2 * x


async def test_replay_on_replays_with_every_connection_refused(
    tmp_path: Path, magics: ChatMagics, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [cycle(tool_call("double", {"x": 21})), cycle(message("It is 42."))]
    recorded = await Chat(ScriptedProvider(script), tools=[double]).send("Double 21")
    path = write_notebook(tmp_path / "recorded.ipynb", ("c1", record_of(recorded)))
    magics.shell.user_ns["__session__"] = str(path)  # type: ignore[union-attr]
    magics.shell.user_ns["double"] = double  # type: ignore[union-attr]
    magics.session.cell_id = "c1"
    monkeypatch.setenv(ENV, "on")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-not-a-real-key")
    tried: list[Any] = []

    def refused(*args: Any) -> Any:
        tried.append(args[-1] if len(args) == 2 else args[0])  # an address, or a host name
        raise OSError("the network is blocked in this test")

    monkeypatch.setattr(socket, "getaddrinfo", refused)
    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket.socket, "connect_ex", refused)
    RAN.clear()
    await magics.chat("--provider anthropic --model claude-sonnet-5-5", "Double 21")
    assert tried == []
    assert RAN == [21]  # the tool really ran again
    events = magics.session.threads.by_name["main"].chat.conversation.events
    assert [e.kind for e in events if e.kind != "notice"] == [
        "chat_request", "tool_call_request", "tool_call_response", "message",
    ]  # fmt: skip
    assert events[-1].content == "It is 42."  # type: ignore[union-attr]
