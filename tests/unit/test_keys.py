"""Keys: .env files (only keys are read from them), masking, a 401 that echoes the key, a key
changed mid-session, and a key that never follows a change of endpoint.

Redaction itself (every provider error, tool results, attachments): test_redaction.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_turns import Chat
from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.kernel import keys
from jupyter_turns.kernel.endpoint_command import endpoint_command
from jupyter_turns.kernel.keys import (
    api_key,
    key_command,
    load_dotenv,
    parse_dotenv,
    read_dotenvs,
)
from jupyter_turns.kernel.threads import build_provider
from jupyter_turns.model.events import ErrorEvent
from jupyter_turns.providers import endpoints
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.providers.catalog import ProviderChoice
from jupyter_turns.providers.endpoints import DEFAULT_ENDPOINT, ENDPOINT_VARIABLES
from jupyter_turns.redaction import REDACTED, masked
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response

from .conftest import FakeClock

KEY = "sk-ant-api03-UNITSECRET-abcdefghijklmnop-0123456789"
HAIKU = "claude-haiku-4-5"


def _provider() -> Any:
    """Anthropic's provider as %%chat builds it: with the kernel's key source (the environment,
    else a .env file)."""
    return build_provider(ProviderChoice("anthropic", HAIKU))


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No key or endpoint in the environment, a working directory without a .env file, and a
    kernel session that has bound no key to an endpoint and reported no .env file yet."""
    for name in ("ANTHROPIC_API_KEY", *ENDPOINT_VARIABLES):
        monkeypatch.setenv(name, "")  # so that teardown restores whatever a test set
        monkeypatch.delenv(name)
    monkeypatch.setattr(endpoints, "_given", {})
    monkeypatch.setattr(keys, "_reported", set())
    monkeypatch.setattr(endpoints, "_choices", {})
    monkeypatch.setattr(endpoints, "_from_dotenv", {})
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


ATTACKER_TOKEN = "sk-ant-oat01-ATTACKERTOKEN-0123456789abcdef"
ATTACKER_HEADERS = f"Authorization: Bearer {ATTACKER_TOKEN}"  # replaces the key's own header


def test_dotenv_gives_only_keys_and_shows_what_it_does_not_apply(
    no_key: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    monkeypatch.setenv("OTHER_SETTING", "")
    monkeypatch.delenv("OTHER_SETTING")
    monkeypatch.setenv("ANTHROPIC_LOG", "")
    monkeypatch.delenv("ANTHROPIC_LOG")
    (no_key / ".env").write_text(
        f"ANTHROPIC_API_KEY={KEY}\nANTHROPIC_BASE_URL=http://user:pw@attacker.example:8443/v\n"
        f"ANTHROPIC_AUTH_TOKEN={ATTACKER_TOKEN}\n"
        f'ANTHROPIC_CUSTOM_HEADERS="{ATTACKER_HEADERS}"\nANTHROPIC_LOG=debug\nOTHER_SETTING=1\n'
        "ANTHROPIC_BEDROCK_BASE_URL=http://127.0.0.1:40137\n"
        "ANTHROPIC_VERTEX_BASE_URL=https://vertex.attacker.example/v1?project=p&token=t0ken\n"
    )
    assert load_dotenv([no_key / "missing", no_key]) == no_key / ".env"
    assert os.environ["ANTHROPIC_API_KEY"] == KEY
    not_applied = ("OTHER_SETTING", "ANTHROPIC_LOG", *ENDPOINT_VARIABLES)
    assert [name for name in not_applied if name in os.environ] == []
    out = capsys.readouterr().out
    assert f"read ANTHROPIC_API_KEY ({masked(KEY)}) from {no_key / '.env'}" in out
    assert "NOT applied" in out and "%chat endpoint --from-dotenv" in out
    assert "ANTHROPIC_BASE_URL=http://…@attacker.example:8443/v" in out  # no userinfo
    # a cloud's endpoint in full (it was "…0137"), a token in its query withheld
    assert "ANTHROPIC_BEDROCK_BASE_URL=http://127.0.0.1:40137\n" in out
    assert "ANTHROPIC_VERTEX_BASE_URL=https://vertex.attacker.example/v1?project=p&token=…" in out
    assert "Amazon Bedrock requests go to its own endpoints (https://bedrock-runtime." in out
    assert f"ANTHROPIC_AUTH_TOKEN={masked(ATTACKER_TOKEN)}" in out
    assert f"ANTHROPIC_CUSTOM_HEADERS=Authorization: {masked('Bearer ' + ATTACKER_TOKEN)}" in out
    assert "ANTHROPIC_LOG (a .env file gives only ANTHROPIC_API_KEY, OPENAI_API_KEY)" in out
    assert f"Requests go to {DEFAULT_ENDPOINT} (the default)" in out
    assert KEY not in out and ATTACKER_TOKEN not in out and "pw@" not in out
    assert "t0ken" not in out


def test_dotenv_never_overrides_a_key_and_says_what_it_skips_once(
    no_key: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-already-set-0000000000")
    (no_key / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\nANTHROPIC_BASE_URL=http://x.test\n")
    load_dotenv([no_key])
    load_dotenv([no_key])  # every %%chat without a key reads it again: one notice is enough
    out = capsys.readouterr().out
    assert out.count("NOT applied") == 1 and "read ANTHROPIC_API_KEY" not in out
    import os

    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-already-set-0000000000"
    (no_key / ".env").write_text("ANTHROPIC_BASE_URL=http://changed.test\n")
    load_dotenv([no_key])  # the file changed: said again
    assert "http://changed.test" in capsys.readouterr().out


def test_dotenv_files_sort_keys_endpoint_values_and_other_names(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "ANTHROPIC_API_KEY=k\nANTHROPIC_BASE_URL=http://x\nANTHROPIC_PROFILE=p\nEMPTY=\n"
        "ANTHROPIC_AUTH_TOKEN=\n"  # empty: named by nobody
    )
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / ".env").write_text("UNRELATED=1\n")
    [found] = read_dotenvs([tmp_path / "other", tmp_path, tmp_path / "missing"])
    assert found.path == tmp_path / ".env"
    assert found.keys == {"ANTHROPIC_API_KEY": "k"}
    assert found.endpoint == {"ANTHROPIC_BASE_URL": "http://x"}
    assert found.ignored == ("ANTHROPIC_PROFILE",)


def test_endpoints_are_shown_in_full_but_for_credentials_and_the_default_is_not_named() -> None:
    shown = endpoints.shown
    assert shown("https://u:secret@proxy.test:8080/a?b=1") == "https://…@proxy.test:8080/a?b=1"
    assert shown("https://ghp_token@h.test/") == "https://…@h.test/"  # a username can be a token
    assert (
        shown("https://h.test/v1?region=eu&api_key=k&X-Amz-Signature=s&flag")
        == "https://h.test/v1?region=eu&api_key=…&X-Amz-Signature=…&flag"
    )
    # a look-alike host shows as the name requests go to; what would not print is escaped
    assert shown("https://\u0430pi.anthropic.com/v1") == "https://xn--pi-6kc.anthropic.com/v1"
    assert shown("http://h.test/\x1b[2Kv1") == "http://h.test/\\x1b[2Kv1"
    assert endpoints.custom(DEFAULT_ENDPOINT + "/") is None
    assert endpoints.custom("http://127.0.0.1:9/") == "http://127.0.0.1:9/"
    assert endpoints.current({}) == DEFAULT_ENDPOINT
    assert endpoints.current({"ANTHROPIC_BASE_URL": " "}) == DEFAULT_ENDPOINT


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
        build_provider(ProviderChoice("anthropic"))
    message = str(info.value)
    assert "%chat key" in message and ".env" in message and "before starting Jupyter" in message
    assert "%env" not in message and "--provider scripted" in message


async def test_a_401_that_echoes_the_key_is_shown_redacted(
    server: AnthropicTestServer, clock: FakeClock, no_key: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    (no_key / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    server.enqueue(Reply.error(401, f"invalid x-api-key: {KEY}"))
    chat = Chat(provider=_provider(), sleep=clock.sleep, clock=clock, thinking="off")
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
    chat = Chat(provider=_provider(), sleep=clock.sleep, clock=clock, thinking="off")
    assert (await chat.send("hello")).outcome == "error"
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # what %chat key does
    assert (await chat.send("hello again")).outcome == "complete"
    sent = [r.headers.get("x-api-key") or r.headers["authorization"] for r in server.requests]
    assert sent[0].endswith("sk-ant-first-key-that-was-wrong-0000") and sent[1].endswith(KEY)


# ---------------------------------------------------------------- a key never follows an endpoint


@pytest.fixture
def other() -> Iterator[AnthropicTestServer]:
    """A second endpoint: the one the key was not given for."""
    with AnthropicTestServer() as server:
        yield server


def _sent_key(request: Any) -> str:
    return str(request.headers.get("x-api-key") or request.headers.get("authorization"))


def _type_key(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """``%chat key`` with ``key`` typed into its hidden prompt."""
    import getpass

    monkeypatch.setattr(getpass, "getpass", lambda prompt: key)
    key_command([])


async def test_a_key_entered_for_one_endpoint_is_never_sent_to_the_next(
    server: AnthropicTestServer,
    other: AnthropicTestServer,
    clock: FakeClock,
    no_key: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    _type_key(monkeypatch, KEY)
    assert f"it will be sent to {server.url}" in capsys.readouterr().out
    for host in (server, other):
        host.enqueue(Reply.sse(sse_text_response(["Hi."])))
    chat = Chat(provider=_provider(), sleep=clock.sleep, clock=clock, thinking="off")
    assert (await chat.send("hello")).outcome == "complete"
    endpoint_command([other.url])
    moved = capsys.readouterr().out
    assert f"Requests go to {other.url} (chosen with %chat endpoint)" in moved
    assert f"was given for {server.url}" in moved and "Run %chat key" in moved
    refused = await chat.send("hello there")
    error = refused.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "config"
    assert "Run %chat key to give a key for" in error.message and KEY not in error.message
    assert other.requests == []  # nothing was sent: not the key, not the conversation
    second = "sk-ant-api03-SECOND-key-for-the-other-endpoint-0000"
    _type_key(monkeypatch, second)
    assert (await chat.send("and now?")).outcome == "complete"
    assert [_sent_key(r).endswith(KEY) for r in server.requests] == [True]
    assert [_sent_key(r).endswith(second) for r in other.requests] == [True]


async def test_a_key_from_the_environment_stays_with_its_endpoint_too(
    server: AnthropicTestServer,
    other: AnthropicTestServer,
    clock: FakeClock,
    no_key: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # set before Jupyter started: with its
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # endpoint, the user's own choice
    server.enqueue(Reply.sse(sse_text_response(["Hi."])))
    chat = Chat(provider=_provider(), sleep=clock.sleep, clock=clock, thinking="off")
    assert (await chat.send("hello")).outcome == "complete"
    endpoint_command([other.url])
    with pytest.raises(ProviderConfigError, match="from the environment"):
        _provider()  # a new thread's provider refuses at once
    assert (await chat.send("hello again")).outcome == "error"
    endpoint_command(["default"])
    endpoint_command([server.url])  # back where the key was given: it goes again
    server.enqueue(Reply.sse(sse_text_response(["Hi."])))
    assert (await chat.send("back")).outcome == "complete"
    assert other.requests == [] and len(server.requests) == 2


async def test_from_dotenv_applies_the_files_endpoint_only_when_asked(
    server: AnthropicTestServer,
    other: AnthropicTestServer,
    clock: FakeClock,
    no_key: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import os

    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    file_key = "sk-ant-api03-FILEKEY-for-the-files-own-endpoint-00"
    (no_key / ".env").write_text(
        f"ANTHROPIC_API_KEY={file_key}\nANTHROPIC_BASE_URL={other.url}\n"
        f"ANTHROPIC_CUSTOM_HEADERS=x-proxy-route: team-a\n"
    )
    server.enqueue(Reply.sse(sse_text_response(["Here."])))
    other.enqueue(Reply.sse(sse_text_response(["There."])))
    chat = Chat(provider=_provider(), sleep=clock.sleep, clock=clock, thinking="off")
    assert (await chat.send("hello")).outcome == "complete"
    assert other.requests == [] and "x-proxy-route" not in server.requests[0].headers
    endpoint_command([])
    shown = capsys.readouterr().out
    assert f"names ANTHROPIC_BASE_URL={other.url}" in shown and "not applied" in shown
    endpoint_command(["--from-dotenv"])
    applied = capsys.readouterr().out
    assert f"Requests go to {other.url} (from {no_key / '.env'})" in applied
    assert os.environ["ANTHROPIC_CUSTOM_HEADERS"] == "x-proxy-route: team-a"
    # the file's own key goes with the file's endpoint: they were given together
    assert f"The key in use ({masked(file_key)}) goes there." in applied
    assert (await chat.send("again")).outcome == "complete"
    assert _sent_key(other.requests[0]).endswith(file_key)
    assert other.requests[0].headers["x-proxy-route"] == "team-a"


def test_endpoint_command_refuses_what_is_not_a_url(no_key: Path) -> None:
    from IPython.core.error import UsageError

    for args in (["ftp://x"], ["not a url"], ["--bogus"], ["a", "b"]):
        with pytest.raises(UsageError, match="usage: %chat endpoint"):
            endpoint_command(args)
    import os

    assert "ANTHROPIC_BASE_URL" not in os.environ


def test_endpoint_command_without_a_dotenv_changes_nothing(
    no_key: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint_command(["--from-dotenv"])
    assert "No .env file names an endpoint" in capsys.readouterr().out
    endpoint_command([])
    out = capsys.readouterr().out
    assert f"Requests go to {DEFAULT_ENDPOINT} (the default)" in out and "No key yet" in out


def test_endpoint_command_names_the_key_a_dotenv_holds_before_it_is_read(
    no_key: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 45: "No key yet" while a ``.env`` next to the notebook held one. Showing the
    endpoint reads nothing into the environment: the first request does."""
    import os

    key = "sk-ant-api03-from-the-dotenv-file-0000wXyZ"
    (no_key / ".env").write_text(f"ANTHROPIC_API_KEY={key}\n")
    endpoint_command([])
    out = capsys.readouterr().out
    assert "No key yet" not in out and key not in out
    assert f"No key in this kernel yet; {no_key.resolve() / '.env'} holds one (sk-ant-…wXyZ)" in (
        out
    )
    assert "the first request reads it, for the endpoint in use then" in out
    assert "ANTHROPIC_API_KEY" not in os.environ


def test_a_provider_built_in_python_reads_no_dotenv_and_keeps_keys_to_their_endpoint(
    server: AnthropicTestServer,
    other: AnthropicTestServer,
    no_key: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    (no_key / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    with pytest.raises(ProviderConfigError, match="No Anthropic API key found"):
        AnthropicProvider(HAIKU)  # reading a .env is the kernel's: %%chat passes it
    assert "ANTHROPIC_API_KEY" not in os.environ
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    _type_key(monkeypatch, KEY)
    assert AnthropicProvider(HAIKU).endpoint == server.url
    endpoint_command([other.url])
    for source in ({}, {"key_source": lambda: KEY}):  # the default source, or anyone's
        with pytest.raises(ProviderConfigError, match=f"was given for {server.url}"):
            AnthropicProvider(HAIKU, **source)
    assert other.requests == []


# ------------------------------------------------------------ a .env that is not yours (issue 39)

OTHER = 65534  # nobody: "another user" (the suite runs as root, who may chown)


def _theirs(path: Path) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("making another user's file needs root (the suite runs as root)")
    os.chown(path, OTHER, OTHER, follow_symlinks=False)


@pytest.mark.parametrize("how", ["their file", "my link to their file", "their link to mine"])
def test_a_dotenv_another_user_owns_gives_no_key_and_says_how_to_use_it(
    no_key: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    import os

    target = no_key / ("elsewhere.env" if how != "their file" else ".env")
    target.write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    if how != "their file":
        (no_key / ".env").symlink_to(target.name)
    _theirs(target if how != "their link to mine" else no_key / ".env")
    assert load_dotenv([no_key]) is None and api_key({}) is None
    assert "ANTHROPIC_API_KEY" not in os.environ
    out = capsys.readouterr().out
    assert f"{no_key / '.env'} was NOT read: it belongs to nobody (uid 65534), not to you" in out
    assert f"It gives ANTHROPIC_API_KEY ({masked(KEY)})" in out and KEY not in out
    assert f"%chat key --from-dotenv {no_key / '.env'}" in out
    load_dotenv([no_key])
    assert capsys.readouterr().out == ""  # said once


@pytest.mark.parametrize(
    ("folder_mode", "file_mode", "read"),
    [(0o777, 0o600, False), (0o1777, 0o600, True), (0o700, 0o666, False), (0o775, 0o644, True)],
)
def test_a_dotenv_others_can_write_or_replace_gives_no_key(
    no_key: Path, folder_mode: int, file_mode: int, read: bool
) -> None:
    """A folder every user can write lets them put a .env there, unless the sticky bit (as on
    /tmp) keeps them from replacing yours; a file every user can write is anyone's."""
    shared = no_key / "shared"
    shared.mkdir()
    (shared / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    shared.chmod(folder_mode)
    (shared / ".env").chmod(file_mode)
    [found] = read_dotenvs([shared])
    assert (found.refused is None) is read
    assert (load_dotenv([shared], announce=False) is not None) is read
    if not read:
        assert found.refused in (
            f"its folder {shared} can be written by every user (mode {folder_mode:o})",
            "every user can write it",
        )


def test_chat_key_from_dotenv_uses_the_file_the_user_names(
    no_key: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from IPython.core.error import UsageError

    monkeypatch.setenv("OPENAI_API_KEY", "")  # so that teardown restores it

    (no_key / ".env").write_text(f"ANTHROPIC_API_KEY={KEY}\nOPENAI_API_KEY=sk-openai-000000\n")
    _theirs(no_key / ".env")
    key_command(["--from-dotenv", str(no_key / ".env")], lambda service: "http://127.0.0.1:9/")
    out = capsys.readouterr().out
    assert os.environ["ANTHROPIC_API_KEY"] == KEY
    assert f"ANTHROPIC_API_KEY set for this kernel from {no_key / '.env'} (it belongs to " in out
    assert "it will be sent to http://127.0.0.1:9/" in out and KEY not in out
    assert endpoints.refusal(KEY, "http://127.0.0.1:9/") is None  # bound where it goes
    assert endpoints.refusal(KEY, DEFAULT_ENDPOINT) is not None
    (no_key / "empty.env").write_text("ANTHROPIC_BASE_URL=http://x.test\n")
    with pytest.raises(UsageError, match="gives no key"):
        key_command(["--from-dotenv", str(no_key / "empty.env")])
    with pytest.raises(UsageError, match=r"no readable \.env file"):
        key_command(["--from-dotenv", str(no_key / "missing.env")])


def test_a_fifo_named_dotenv_does_not_block_the_kernel(no_key: Path) -> None:
    """Opened for reading, a FIFO waits for a writer: the kernel would hang at the turn."""
    import os
    import threading

    os.mkfifo(no_key / ".env")
    done = threading.Event()
    thread = threading.Thread(target=lambda: (read_dotenvs([no_key]), done.set()), daemon=True)
    thread.start()
    finished = done.wait(30)
    if not finished:  # let the stuck reader go before failing
        with open(no_key / ".env", "w") as unblock:
            unblock.write("")
    assert finished, "reading a FIFO named .env blocked"
