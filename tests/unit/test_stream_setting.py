"""Stream or not, per thread, through ``%%chat`` cells in plain IPython against the local API
server: ``%config ChatMagics.stream`` reaches a thread that made no choice of its own, cell by
cell; ``--stream on|off`` and a remembered fallback (an endpoint that answered without
streaming) are the thread's own and outlast a %config."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.kernel.threads import Thread
from tests.support.anthropic_json import message_from_sse
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response

ANSWER = sse_text_response(["Fine."])
STREAMED = Reply.sse(ANSWER)
WHOLE = Reply.json(200, message_from_sse(ANSWER.encode()))  # a plain answer, or a proxy's


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.delenv("JUPYTER_TURNS_REPLAY", raising=False)
        yield server
        server.assert_all_served()


@pytest.fixture
def magics(magics: ChatMagics) -> ChatMagics:  # conftest's, on the plain IPython path
    assert getattr(magics.shell, "kernel", None) is None
    magics.thinking = "off"
    return magics


async def cell(magics: ChatMagics, server: AnthropicTestServer, line: str = "") -> list[bool]:
    """Run one ``%%chat`` cell; whether each request it made asked for a stream."""
    before = len(server.requests)
    await magics.chat(f"--provider anthropic {line}".strip(), "hello")
    return [bool(r.body["stream"]) for r in server.requests[before:]]


def main(magics: ChatMagics) -> Thread:
    return magics.session.threads.by_name["main"]


async def test_chatmagics_stream_reaches_the_current_thread_until_it_chooses(
    magics: ChatMagics, server: AnthropicTestServer
) -> None:
    server.enqueue(STREAMED, WHOLE, STREAMED, WHOLE, WHOLE, STREAMED, STREAMED)
    assert await cell(magics, server) == [True]
    magics.stream = False  # %config ChatMagics.stream = False
    assert await cell(magics, server) == [False]  # the existing thread's next cell
    assert main(magics).settings()["stream"] is None  # the default, not the thread's own
    magics.stream = True
    assert await cell(magics, server) == [True]
    assert await cell(magics, server, "--stream off") == [False]
    assert await cell(magics, server) == [False]  # --stream off sticks to the thread...
    magics.stream = True
    assert await cell(magics, server, "--stream on") == [True]
    magics.stream = False
    assert await cell(magics, server) == [True]  # ...and so does --stream on
    assert main(magics).settings()["stream"] is True


async def test_plain_ipython_remembers_an_endpoint_that_does_not_stream(
    magics: ChatMagics, server: AnthropicTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.enqueue(WHOLE, WHOLE, WHOLE, WHOLE)
    assert await cell(magics, server) == [True, False]  # JSON to a stream request: asked again
    assert "does not stream" in capsys.readouterr().out
    assert main(magics).stream is False and main(magics).settings()["stream"] is False
    assert await cell(magics, server) == [False]  # the next cell asks plainly at once
    magics.stream = True  # a %config cannot make that endpoint stream
    assert await cell(magics, server) == [False]
    assert [e.kind for e in main(magics).chat.conversation.events].count("message") == 3
    assert "does not stream" not in capsys.readouterr().out
    # --stream on is the user's word: the thread tries streaming again
    server.enqueue(STREAMED)
    assert await cell(magics, server, "--stream on") == [True]
