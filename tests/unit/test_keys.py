"""Keys: .env files, masking, a 401 that echoes the key, a key changed mid-session.

Redaction itself (every provider error, tool results, attachments): test_redaction.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_turns import Chat
from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.events import ErrorEvent
from jupyter_turns.keys import api_key, load_dotenv, masked, parse_dotenv
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.redaction import REDACTED
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response

from .conftest import FakeClock

KEY = "sk-ant-api03-UNITSECRET-abcdefghijklmnop-0123456789"
HAIKU = "claude-haiku-4-5"


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No key in the environment, and a working directory without a .env file."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.setenv(name, "")  # so that teardown restores whatever a .env set
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_dotenv_lines_export_quotes_and_comments() -> None:
    text = "\n".join(
        [
            "# a comment",
            "",
            "ANTHROPIC_API_KEY=sk-ant-plain  # trailing comment",
            "export ANTHROPIC_BASE_URL='http://127.0.0.1:1/'",
            'QUOTED="has # hash" # and a comment',
            "  SPACED = value with spaces  ",
            "not an assignment",
            "#HIDDEN=1",
        ]
    )
    assert parse_dotenv(text) == {
        "ANTHROPIC_API_KEY": "sk-ant-plain",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1/",
        "QUOTED": "has # hash",
        "SPACED": "value with spaces",
    }


def test_dotenv_sets_only_anthropic_variables_and_never_overrides(
    no_key: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://already-set")
    monkeypatch.setenv("OTHER_SETTING", "")
    monkeypatch.delenv("OTHER_SETTING")
    (no_key / ".env").write_text(
        f"ANTHROPIC_API_KEY={KEY}\nANTHROPIC_BASE_URL=http://from-file\nOTHER_SETTING=1\n"
    )
    import os

    assert load_dotenv([no_key / "missing", no_key]) == no_key / ".env"
    assert os.environ["ANTHROPIC_API_KEY"] == KEY
    assert os.environ["ANTHROPIC_BASE_URL"] == "http://already-set"
    assert "OTHER_SETTING" not in os.environ
    out = capsys.readouterr().out
    assert f"ANTHROPIC_API_KEY ({masked(KEY)})" in out and str(no_key / ".env") in out
    assert KEY not in out and "BASE_URL" not in out  # only what it set


def test_a_dotenv_next_to_the_notebook_comes_before_the_working_directory(
    no_key: Path, tmp_path: Path
) -> None:
    here, there = tmp_path / "cwd", tmp_path / "notebooks"
    here.mkdir()
    there.mkdir()
    (here / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-from-the-cwd-000000\n")
    (there / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    import os

    os.chdir(here)
    assert api_key({"__session__": str(there / "analysis.ipynb")}) == KEY


def test_the_masked_form_never_shows_the_key() -> None:
    assert masked(KEY) == "sk-ant-…6789" and masked("short") == "…"


def test_missing_key_recommends_ways_that_save_nothing(no_key: Path) -> None:
    with pytest.raises(ProviderConfigError) as info:
        AnthropicProvider()
    message = str(info.value)
    assert "%chat key" in message and ".env" in message and "before starting Jupyter" in message
    assert "%env" not in message and "--provider scripted" in message


async def test_a_401_that_echoes_the_key_is_shown_redacted(
    server: AnthropicTestServer, clock: FakeClock, no_key: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (no_key / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\nANTHROPIC_BASE_URL={server.url}\n")
    server.enqueue(Reply.error(401, f"invalid x-api-key: {KEY}"))
    chat = Chat(provider=AnthropicProvider(HAIKU), sleep=clock.sleep, clock=clock, thinking="off")
    turn = await chat.send("hello")
    assert KEY in json.dumps(server.requests[0].headers)  # the key from .env was used
    error = turn.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "auth"
    assert f"invalid x-api-key: {REDACTED}" in error.message and "%chat key" in error.message
    assert KEY not in json.dumps(chat.conversation.to_record())


async def test_a_key_set_later_is_used_by_the_next_request(
    server: AnthropicTestServer, clock: FakeClock, no_key: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-first-key-that-was-wrong-0000")
    server.enqueue(Reply.error(401), Reply.sse(sse_text_response(["Hi."])))
    chat = Chat(provider=AnthropicProvider(HAIKU), sleep=clock.sleep, clock=clock, thinking="off")
    assert (await chat.send("hello")).outcome == "error"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # what %chat key does
    assert (await chat.send("hello again")).outcome == "complete"
    sent = [r.headers.get("x-api-key") or r.headers["authorization"] for r in server.requests]
    assert sent[0].endswith("sk-ant-first-key-that-was-wrong-0000") and sent[1].endswith(KEY)
