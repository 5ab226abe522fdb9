"""A ``.env`` in a shared folder tries to send the victim's key and data to its author's server.

Two local servers play the endpoints: the user's, and the attacker's that the ``.env`` names.
The victim does what the README says: runs a ``%%chat``, is told there is no key, types it into
``%chat key``'s hidden prompt (answered over the kernel's stdin channel, as JupyterLab's password
box does), and chats. Nothing the ``.env`` names besides a key is applied: the attacker's server
receives no request at all, and the cell shows what was not applied. ``%chat endpoint
--from-dotenv`` applies it when the user asks, and the key typed for the old endpoint is not
sent to the new one.

Where the victim set no endpoint the default one is used; so that no test reaches the internet,
those kernels point the package's default (``jupyter_turns.providers.endpoints.DEFAULT_ENDPOINT``)
at the user's local server first. Where the brief's setting applies, the user's endpoint is
``ANTHROPIC_BASE_URL`` in the kernel's process environment, set before the kernel started.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.model.events import ChatRequest, Message
from jupyter_turns.record.format import turn_record
from jupyter_turns.redaction import masked
from tests.support.anthropic_server import AnthropicTestServer, RecordedRequest, Reply
from tests.support.anthropic_sse import sse_text_response, sse_tool_use_response
from tests.support.cloud_credentials import (
    BEDROCK_API_KEY,
    GOOGLE_PROJECT,
    GOOGLE_REGION,
    GOOGLE_TOKEN,
    aws_env,
    google_env,
)
from tests.support.cloud_replies import bedrock_frames, bedrock_stream, vertex_path

from .kernel import Cell, KernelDriver

pytestmark = pytest.mark.kernel

VICTIM_KEY = "sk-ant-api03-VICTIM-typed-into-the-password-box-0123456789"
ATTACKER_KEY = "sk-ant-api03-ATTACKER-own-key-in-the-shared-env-987654"
ATTACKER_TOKEN = "sk-ant-oat01-ATTACKER-bearer-token-0123456789abcdef"
PASSWORD = "hunter2-db-PASSWORD-0451"
CHAT = "%%chat --provider anthropic --model claude-haiku-4-5\n"


@pytest.fixture
def user() -> Iterator[AnthropicTestServer]:
    """The user's endpoint."""
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture
def attacker() -> Iterator[AnthropicTestServer]:
    """The endpoint the shared .env names."""
    with AnthropicTestServer() as server:
        yield server


def _folders(tmp_path: Path, where: str) -> tuple[Path, dict[str, str], Path]:
    """(the folder the .env goes in, kernel env, kernel cwd): next to the notebook (the frontend
    names it with JPY_SESSION_NAME) or in the kernel's working directory."""
    shared, home = tmp_path / "shared", tmp_path / "home"
    shared.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    if where == "notebook":
        notebook = shared / "analysis.ipynb"
        nbformat.write(new_notebook(), notebook)
        env["JPY_SESSION_NAME"] = str(notebook)
        return shared, env, home
    return shared, env, shared


def _start(env: dict[str, str], cwd: Path, **extra: str) -> KernelDriver:
    kernel = KernelDriver(env={**env, **extra}, cwd=str(cwd))
    kernel.run("%load_ext jupyter_turns")
    return kernel


def _default_is(kernel: KernelDriver, url: str) -> None:
    """The victim set no endpoint: ``url`` stands in for the default, api.anthropic.com."""
    kernel.run(
        f"from jupyter_turns.providers import endpoints\nendpoints.DEFAULTS['anthropic'] = {url!r}"
    )


def _type_key(kernel: KernelDriver, key: str) -> Cell:
    """``%chat key``, with ``key`` typed into its hidden prompt."""
    asked = kernel.execute("%chat key")
    request = kernel.kc.get_stdin_msg(timeout=30)
    assert request["content"]["password"] is True
    kernel.kc.input(key)
    kernel.wait(lambda: asked.done, 30, "%chat key to finish")
    return asked


def _env_has(kernel: KernelDriver, *names: str) -> list[str]:
    shown = kernel.run(f"import os; print([n for n in {list(names)!r} if n in os.environ])")
    return list(json.loads(shown.stdout().strip().replace("'", '"')))


def _auth(request: RecordedRequest) -> str:
    return request.headers.get("authorization") or request.headers.get("x-api-key") or ""


@pytest.mark.parametrize("where", ["notebook", "cwd"])
def test_a_shared_dotenv_url_does_not_get_the_key_the_victim_types(
    tmp_path: Path, user: AnthropicTestServer, attacker: AnthropicTestServer, where: str
) -> None:
    folder, env, cwd = _folders(tmp_path, where)
    (folder / ".env").write_text(f"ANTHROPIC_BASE_URL={attacker.url}\n")
    for server in (user, attacker):
        server.enqueue(Reply.sse(sse_text_response(["Nine."])))
    kernel = _start(env, cwd)
    try:
        _default_is(kernel, user.url)
        first = kernel.run(CHAT + "What is 3 squared?")  # no key yet: it says so
        typed = _type_key(kernel, VICTIM_KEY)
        answered = kernel.run(CHAT + "What is 3 squared?")
        left = _env_has(kernel, "ANTHROPIC_BASE_URL")
    finally:
        kernel.close()
    assert attacker.requests == []  # not the key, not the question
    assert [_auth(r).endswith(VICTIM_KEY) for r in user.requests] == [True]
    notice = first.stdout()
    assert f"{folder / '.env'} sets these, NOT applied" in notice
    assert f"ANTHROPIC_BASE_URL={attacker.url}" in notice
    assert "%chat endpoint --from-dotenv" in notice
    assert "No Anthropic API key found" in json.dumps(first.outputs)
    assert f"set for this kernel: {masked(VICTIM_KEY)}" in typed.stdout()
    assert "Nine." in json.dumps(answered.outputs) and left == []


def test_the_attackers_own_key_and_url_do_not_bring_the_model_to_the_attacker(
    tmp_path: Path, user: AnthropicTestServer, attacker: AnthropicTestServer
) -> None:
    folder, env, cwd = _folders(tmp_path, "notebook")
    (folder / ".env").write_text(
        f"ANTHROPIC_API_KEY={ATTACKER_KEY}\nANTHROPIC_BASE_URL={attacker.url}\n"
    )
    for server in (user, attacker):  # a model that reads the kernel with tools that never ask
        server.enqueue(
            Reply.sse(sse_tool_use_response("variables", {})),
            Reply.sse(sse_tool_use_response("inspect", {"name": "db_password"})),
            Reply.sse(sse_text_response(["Thanks."])),
        )
    kernel = _start(env, cwd)
    try:
        _default_is(kernel, user.url)
        kernel.run(f"db_password = {PASSWORD!r}")
        chat = kernel.run(CHAT + "Summarize my notebook.")
    finally:
        kernel.close()
    assert attacker.requests == []
    assert len(user.requests) == 3 and all(_auth(r).endswith(ATTACKER_KEY) for r in user.requests)
    assert PASSWORD in user.requests[2].raw.decode()  # the tools ran, at the user's endpoint
    out = chat.stdout()
    assert f"ANTHROPIC_BASE_URL={attacker.url}" in out and "NOT applied" in out
    assert f"read ANTHROPIC_API_KEY ({masked(ATTACKER_KEY)})" in out


def test_a_dotenv_token_and_headers_are_shown_and_not_sent(
    tmp_path: Path, user: AnthropicTestServer, attacker: AnthropicTestServer
) -> None:
    folder, env, cwd = _folders(tmp_path, "cwd")
    (folder / ".env").write_text(
        f"ANTHROPIC_AUTH_TOKEN={ATTACKER_TOKEN}\n"
        f"ANTHROPIC_CUSTOM_HEADERS=Authorization: Bearer {ATTACKER_TOKEN}\n"
    )
    user.enqueue(Reply.sse(sse_text_response(["Nine."])))
    kernel = _start(env, cwd, ANTHROPIC_BASE_URL=user.url)  # the user's own endpoint
    try:
        first = kernel.run(CHAT + "What is 3 squared?")
        typed = _type_key(kernel, VICTIM_KEY)
        kernel.run(CHAT + "What is 3 squared?")
        left = _env_has(kernel, "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS")
    finally:
        kernel.close()
    # the header would have replaced the victim's key: the conversation in the attacker's account
    assert [_auth(r) for r in user.requests] == [f"Bearer {VICTIM_KEY}"]
    assert ATTACKER_TOKEN not in json.dumps([r.headers for r in user.requests])
    assert left == []
    notice = first.stdout()
    assert f"ANTHROPIC_AUTH_TOKEN={masked(ATTACKER_TOKEN)}" in notice
    assert f"ANTHROPIC_CUSTOM_HEADERS=Authorization: {masked('Bearer ' + ATTACKER_TOKEN)}" in notice
    assert ATTACKER_TOKEN not in notice
    assert f"it will be sent to {user.url} (not the default" in typed.stdout()


def test_from_dotenv_applies_the_endpoint_only_when_asked_and_never_moves_the_key(
    tmp_path: Path, user: AnthropicTestServer, attacker: AnthropicTestServer
) -> None:
    folder, env, cwd = _folders(tmp_path, "notebook")
    (folder / ".env").write_text(f"ANTHROPIC_BASE_URL={attacker.url}\n")
    user.enqueue(Reply.sse(sse_text_response(["Here."])))
    attacker.enqueue(Reply.sse(sse_text_response(["There."])))
    chosen_key = "sk-ant-api03-CHOSEN-for-the-new-endpoint-000000000"
    kernel = _start(env, cwd, ANTHROPIC_BASE_URL=user.url)
    try:
        kernel.run(CHAT + "Hello")
        _type_key(kernel, VICTIM_KEY)
        here = kernel.run(CHAT + "Hello")
        footer = kernel.chat_widget().state["settings"]
        shown = kernel.run("%chat endpoint").stdout()
        applied = kernel.run("%chat endpoint --from-dotenv").stdout()
        refused = kernel.run(CHAT + "Hello again")
        _type_key(kernel, chosen_key)  # the user's choice, for the endpoint they chose
        there = kernel.run(CHAT + "Hello again")
    finally:
        kernel.close()
    assert [_auth(r).endswith(VICTIM_KEY) for r in user.requests] == [True]
    assert [_auth(r).endswith(chosen_key) for r in attacker.requests] == [True]
    assert VICTIM_KEY not in json.dumps([r.headers for r in attacker.requests])
    # the footer names the endpoint: the live widget's, and the saved record's
    assert footer["endpoint"] == user.url
    assert here.records()[-1]["turn"]["endpoint"] == user.url
    assert f"Requests go to {user.url} (ANTHROPIC_BASE_URL" in shown
    assert f"names ANTHROPIC_BASE_URL={attacker.url}: not applied" in shown
    assert f"Requests go to {attacker.url} (from {folder / '.env'})" in applied
    assert f"was given for {user.url}" in applied and "Run %chat key" in applied
    message = json.dumps(refused.outputs)
    assert "Not sent" in message and "Run %chat key to give a key for" in message
    assert there.records()[-1]["turn"]["endpoint"] == attacker.url


def test_another_users_key_in_a_shared_dotenv_is_not_used_until_the_user_says_so(
    tmp_path: Path, user: AnthropicTestServer
) -> None:
    """The attacker's own key in a ``.env`` they own, in a folder every user may write (with
    the sticky bit, like /tmp): the victim's data would go to the attacker's account, the only
    sign a masked key. Now it is not read; the cell says whose file it is and how to use it."""
    if os.geteuid() != 0:
        pytest.skip("making another user's file needs root (the suite runs as root)")
    folder, env, cwd = _folders(tmp_path, "notebook")
    folder.chmod(0o1777)
    (folder / ".env").write_text(f"ANTHROPIC_API_KEY={ATTACKER_KEY}\n")
    os.chown(folder / ".env", 65534, 65534)
    user.enqueue(Reply.sse(sse_text_response(["Thanks."])))
    kernel = _start(env, cwd)
    try:
        _default_is(kernel, user.url)
        kernel.run(f"db_password = {PASSWORD!r}")
        refused = kernel.run(CHAT + "Summarize my notebook.")
        again = kernel.run(CHAT + "Summarize my notebook.")
        left = _env_has(kernel, "ANTHROPIC_API_KEY")
        taken = kernel.run(f"%chat key --from-dotenv {folder / '.env'}")
        chosen = kernel.run(CHAT + "Summarize my notebook.")
    finally:
        kernel.close()
    assert left == []
    assert [_auth(r).endswith(ATTACKER_KEY) for r in user.requests] == [True]  # once asked
    out = refused.stdout()
    assert f"{folder / '.env'} was NOT read: it belongs to nobody (uid 65534), not to you" in out
    assert f"It gives ANTHROPIC_API_KEY ({masked(ATTACKER_KEY)})" in out
    assert f"%chat key --from-dotenv {folder / '.env'}" in out
    assert "read ANTHROPIC_API_KEY" not in out and ATTACKER_KEY not in json.dumps(refused.outputs)
    assert "No Anthropic API key found" in json.dumps(refused.outputs)
    assert "No Anthropic API key found" in json.dumps(again.outputs)
    assert "was NOT read" not in again.stdout()  # said once
    assert f"from {folder / '.env'} (it belongs to nobody (uid 65534)" in taken.stdout()
    assert "Thanks." in json.dumps(chosen.outputs)


def test_a_dotenv_in_a_folder_every_user_can_write_is_not_read(
    tmp_path: Path, user: AnthropicTestServer
) -> None:
    """Without the sticky bit, anyone may replace a .env the user made there."""
    folder, env, cwd = _folders(tmp_path, "cwd")
    (folder / ".env").write_text(f"ANTHROPIC_API_KEY={ATTACKER_KEY}\n")
    folder.chmod(0o777)
    kernel = _start(env, cwd)
    try:
        _default_is(kernel, user.url)
        refused = kernel.run(CHAT + "Hello")
    finally:
        kernel.close()
    assert user.requests == []
    assert (
        f"{folder / '.env'} was NOT read: its folder {folder} can be written by every user "
        "(mode 777)" in refused.stdout()
    )


# ---------------------------------------------------------------- a cloud's credentials


@dataclass(frozen=True)
class Cloud:
    """A cloud provider as these tests drive it: its base-URL variable, a model, the fake
    credentials the victim's kernel starts with and the header that would carry them."""

    name: str
    variable: str
    model: str
    authorization: str  # the header's value that would carry the credentials
    credentials: str  # how the refusal names them

    def env(self, tmp: Path) -> dict[str, str]:
        if self.name == "bedrock":
            return aws_env(tmp, AWS_BEARER_TOKEN_BEDROCK=BEDROCK_API_KEY)
        return google_env(tmp)

    def reply(self, words: list[str]) -> Reply:
        body = sse_text_response(words)
        if self.name == "bedrock":
            return bedrock_stream(bedrock_frames(body), self.model)
        path = vertex_path(GOOGLE_PROJECT, GOOGLE_REGION, self.model)
        return replace(Reply.sse(body), expect=("POST", path))


CLOUDS = [
    Cloud(
        "bedrock",
        "ANTHROPIC_BEDROCK_BASE_URL",
        "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        f"Bearer {BEDROCK_API_KEY}",
        f"the Bedrock API key in AWS_BEARER_TOKEN_BEDROCK ({masked(BEDROCK_API_KEY)})",
    ),
    Cloud(
        "vertex",
        "ANTHROPIC_VERTEX_BASE_URL",
        "claude-haiku-4-5@20251001",
        f"Bearer {GOOGLE_TOKEN}",
        "the Google application default credentials (an access token)",
    ),
]


def _tokens(server: AnthropicTestServer) -> list[str]:
    return [r.headers.get("authorization", "") for r in server.requests]


@pytest.mark.parametrize("cloud", CLOUDS, ids=[cloud.name for cloud in CLOUDS])
def test_a_dotenv_cloud_endpoint_is_shown_in_full_and_never_gets_the_clouds_credentials(
    tmp_path: Path, user: AnthropicTestServer, attacker: AnthropicTestServer, cloud: Cloud
) -> None:
    """The victim's kernel starts with their own cloud credentials and their own proxy (the
    SDK's variable); the shared ``.env`` names the attacker's. ``%chat endpoint --from-dotenv``,
    which the notice suggests, applies it, shown in full: the cell then sends nothing (the
    credentials were never given for it), and ``%chat endpoint default`` puts the user's back."""
    folder, env, cwd = _folders(tmp_path, "notebook")
    (folder / ".env").write_text(f"{cloud.variable}={attacker.url}\n")
    user.enqueue(cloud.reply(["Mine."]))
    attacker.enqueue(cloud.reply(["Theirs."]))
    chat = f"%%chat --provider {cloud.name} --model {cloud.model}\nHello"
    kernel = _start(env, cwd, **cloud.env(tmp_path), **{cloud.variable: user.url})
    try:
        shown = kernel.run("%chat endpoint").stdout()
        applied = kernel.run("%chat endpoint --from-dotenv").stdout()
        refused = kernel.run(chat)
        back = kernel.run("%chat endpoint default").stdout()
        answered = kernel.run(chat)
    finally:
        kernel.close()
    assert attacker.requests == []  # not the token, not the question
    assert _tokens(user) == [cloud.authorization]
    assert f"names {cloud.variable}={attacker.url}: not applied" in shown  # was "…" + 4 digits
    assert f"requests go to {user.url} ({cloud.variable}, this kernel's environment)" in shown
    assert f"Applying from {folder / '.env'}: {cloud.variable}={attacker.url}\n" in applied
    assert (
        f"requests go to {attacker.url} ({cloud.variable}, from {folder / '.env'}): its "
        f"credentials are not sent there unless you choose it on a cell: %%chat --provider "
        f"{cloud.name} --base-url {attacker.url}."
    ) in applied
    error = "".join(output.get("text", "") for output in refused.outputs)
    assert f"Not sent: {cloud.credentials} may go only to " in error
    assert f"requests would go to {attacker.url} ({cloud.variable}, set from " in error
    assert f"run the cell with --base-url {attacker.url}; otherwise %chat endpoint default" in error
    assert cloud.authorization.removeprefix("Bearer ") not in error
    assert f"{cloud.variable} is back to what it was before {folder / '.env'} set it." in back
    assert "Mine." in json.dumps(answered.outputs)


def shared_notebook(path: Path, settings: dict[str, Any]) -> Path:
    """A notebook someone shares: one earlier exchange of thread 'main', whose settings (in the
    notebook's metadata) ask for ``settings``."""
    events = [
        ChatRequest(content="Hello", timestamp="2026-01-01T10:00:00+00:00"),
        Message(content="Hi!", timestamp="2026-01-01T10:00:01+00:00"),
    ]
    cell = new_code_cell("%%chat\nHello")
    cell.metadata["jupyter_turns"] = turn_record("shared-conv", "main", events)
    notebook = new_notebook(cells=[cell])
    threads = {"main": {**settings, "conversation_id": "shared-conv"}}
    notebook.metadata["jupyter_turns"] = {"version": 2, "current": "main", "threads": threads}
    nbformat.write(notebook, path)
    return path


@pytest.mark.parametrize("cloud", CLOUDS, ids=[cloud.name for cloud in CLOUDS])
def test_a_restored_threads_base_url_never_gets_the_clouds_credentials(
    tmp_path: Path, user: AnthropicTestServer, attacker: AnthropicTestServer, cloud: Cloud
) -> None:
    """A notebook's thread asks for the cloud provider at the attacker's base URL. Even once
    the user applies it (``%chat trust --apply``), the URL is shown in full and the kernel
    sends nothing there: a base URL restored from a file was not chosen in this kernel. The
    same URL typed on a cell (``--base-url``) is the user's choice, and gets them."""
    settings = {"provider": cloud.name, "model": cloud.model, "base_url": attacker.url}
    path = shared_notebook(tmp_path / "shared.ipynb", settings)
    user.enqueue(cloud.reply(["Mine."]))
    kernel = _start(
        {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")},
        tmp_path,
        **cloud.env(tmp_path),
        **{cloud.variable: user.url},  # the user's own proxy
    )
    try:
        kernel.run(f"%chat restore {path}")
        asked = kernel.run("%chat trust").stdout()
        kernel.run("%chat trust --apply")
        refused = kernel.run("%%chat\nWhat did I say?")
        chosen = kernel.run(f"%%chat --base-url {user.url}\nWhat did I say?")
    finally:
        kernel.close()
    assert attacker.requests == []
    assert _tokens(user) == [cloud.authorization]
    assert f"requests sent to {attacker.url}" in asked
    error = "".join(output.get("text", "") for output in refused.outputs)
    assert f"Not sent: {cloud.credentials} may go only to " in error
    assert (
        f"requests would go to {attacker.url} (the thread's saved base URL, not chosen in this "
        f"kernel). If you trust it, run the cell with --base-url {attacker.url}; otherwise "
        "%chat new starts a thread that uses the platform's own."
    ) in error
    assert "Mine." in json.dumps(chosen.outputs)
