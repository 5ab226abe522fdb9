"""``--script VAR`` plays for the cell that names it (issue 45): the thread's own provider (the
default one, or the one a cell asked for) answers the next plain ``%%chat`` cell, which says
once that a script played the turn before. Plain IPython against the local API server, the real
Anthropic SDK."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from IPython.core.error import UsageError

from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.kernel.threads import Thread
from jupyter_turns.providers.scripted import cycle, message
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response

NOTE = "A script played this thread's last turn; this cell goes to Claude (Anthropic API), "


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
    magics.thinking = "off"
    magics.session.namespace["story"] = [cycle(message("The total is **42**."))]
    return magics


def main(magics: ChatMagics) -> Thread:
    return magics.session.threads.by_name["main"]


async def test_a_plain_cell_after_a_script_talks_to_the_default_provider_and_says_so_once(
    magics: ChatMagics, server: AnthropicTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.enqueue(Reply.sse(sse_text_response(["Hello from Claude."])))
    server.enqueue(Reply.sse(sse_text_response(["Again."])))
    await magics.chat("--script story", "What is the total?")
    assert "The total is **42**." in capsys.readouterr().out
    assert main(magics).provider == "anthropic" and "script" not in main(magics).settings()

    await magics.chat("", "Thanks! Who are you?")
    said = capsys.readouterr().out
    assert "Hello from Claude." in said
    assert NOTE in said and "claude-" in said.split(NOTE, 1)[1].split(":", 1)[0]
    sent = server.requests[0].body["messages"]
    assert sent[-1]["content"][-1]["text"].endswith("Thanks! Who are you?")
    assert "42" not in str(sent)  # what the script wrote never reaches the model

    await magics.chat("", "And now?")
    assert "A script played" not in capsys.readouterr().out  # said once


async def test_the_provider_a_cell_asked_for_answers_after_a_script(
    magics: ChatMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    await magics.chat("--provider scripted --script story", "What is the total?")
    await magics.chat("", "Echo this")  # the scripted provider of the thread: its echo
    said = capsys.readouterr().out
    assert "The total is **42**." in said and "Echo this" in said.split("42", 1)[1]
    assert main(magics).provider == "scripted"


async def test_a_played_out_script_says_how_to_play_it_again(magics: ChatMagics) -> None:
    await magics.chat("--script story", "What is the total?")
    before = len(main(magics).chat.conversation)
    with pytest.raises(UsageError) as failed:
        await magics.chat("--script story", "Once more")
    assert str(failed.value) == (
        "%%chat --script story: the script has no cycle left (each cycle plays once). Run the "
        "cell that sets `story` again to play it from the start, or leave out --script: the "
        "thread's own provider answers."
    )
    assert len(main(magics).chat.conversation) == before
