"""Every provider through a real kernel: a tool turn per API, a thread that changes provider and
back, an offline replay of an OpenAI turn, where the OpenAI key may go, and the admin's limits.

The kernels are real (jupyter_client); the APIs are the local test server on 127.0.0.1 replaying
recorded bytes (``tests/fixtures/openai``, ``openai-chat``, the Anthropic recordings re-framed
for Bedrock) or the support modules' builders. The cloud providers are pointed at it the way a
user would point them at a proxy: the SDKs' own ``ANTHROPIC_BEDROCK_BASE_URL`` /
``ANTHROPIC_VERTEX_BASE_URL``, with fake AWS keys and a Google authorized-user file whose token
is valid until 2099 (nothing is refreshed, nothing real is read).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_turns.redaction import masked
from tests.support.anthropic_replies import Exchange, Reply, load_recording, recording_path
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import ToolUse, sse_text_response, sse_thinking_response
from tests.support.cloud_credentials import GOOGLE_PROJECT, GOOGLE_REGION, aws_env, google_env
from tests.support.cloud_replies import bedrock_frames, bedrock_stream, sse_data, vertex_path
from tests.support.kernels import cell_record, execute_notebook
from tests.support.openai_chat_replies import chat_reply, chunk_body, chunk_data, recording
from tests.support.openai_sse import (
    Reasoning,
    Text,
    for_responses,
    openai_recording,
    responses_body,
)

from .kernel import Cell, KernelDriver, notebook_from
from .test_persistence import SECRET_PATTERNS

pytestmark = pytest.mark.kernel

OPENAI_KEY = "sk-proj-KERNELTEST-openai-key-never-published-0123456789"
ACCESS_KEY, SECRET_KEY = "AKIDKERNELTEST0000", "fake-aws-secret-kernel-test"
GOOGLE_TOKEN = "ya29.fake-vertex-token-kernel-test"
BEDROCK_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
VERTEX_ID = "claude-haiku-4-5@20251001"
PROJECT, REGION = GOOGLE_PROJECT, GOOGLE_REGION
PROMPT = "Please run the tool, providing whatever arguments you want."
SECRETS = (OPENAI_KEY, SECRET_KEY, GOOGLE_TOKEN)

TOOL = '''\
from jupyter_turns import tool

ran = []

@tool(run="unattended")
def run_me(bar: str | list[str], foo: str = "foo") -> str:
    """A test tool."""
    ran.append(bar)
    return "working!"
'''


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key, endpoint or cloud credential of this machine reaches the kernels: each test
    gives its own."""
    for name in list(os.environ):
        if name.startswith(
            ("OPENAI_", "ANTHROPIC_", "AWS_", "GOOGLE_", "CLOUD_ML_", "CLOUDSDK_", "JUPYTER_TURNS")
        ):
            monkeypatch.delenv(name)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))


def _leaks(text: str) -> list[str]:
    return [p.pattern for p in SECRET_PATTERNS if p.search(text)] + [
        secret for secret in SECRETS if secret in text
    ]


def _published(kernel: KernelDriver) -> str:
    """Everything the kernel sent the frontend, widgets' states included (but the sources the
    test typed, which IOPub echoes)."""
    messages = [
        m for cell in kernel.cells.values() for m in cell.messages
        if m["msg_type"] != "execute_input"
    ]  # fmt: skip
    states = [w.state for w in kernel.widgets.values()]
    return json.dumps([messages, states], default=str)


def _final(cell: Cell) -> dict[str, Any]:
    records = cell.records()
    assert records, f"no record in {cell.outputs}"
    return records[-1]


def _texts(record: dict[str, Any]) -> str:
    return "".join(e["content"] for e in record["events"] if e["kind"] == "message")


def _printed(kernel: KernelDriver, expression: str) -> str:
    return kernel.run(f"print({expression})").stdout().strip()


def _shown(cell: Cell) -> str:
    """What the cell shows, as text: its transcripts without their tags, and its streams."""
    shown = "".join(
        str(o.get("data", {}).get("text/html", "")) + o.get("text", "") for o in cell.outputs
    )
    return html.unescape(re.sub(r"<[^>]+>", " ", shown))


def _shows(cell: Cell, text: str) -> bool:
    """Whether the cell shows ``text`` (its first words, whatever markdown made of the rest)."""
    words = re.findall(r"[A-Za-z]+", text)[:5]
    assert words, text
    return re.search(r"\W+".join(words), _shown(cell)) is not None


def _answered(cycles: list[dict[str, Any]]) -> list[tuple[str | None, str | None]]:
    """Who answered each saved response: a cycle names the provider and model when they
    change, the ones after it carry them forward."""
    named: list[tuple[str | None, str | None]] = []
    current: tuple[str | None, str | None] = (None, None)
    for cycle in cycles:
        if "provider" in cycle or "model" in cycle:
            current = (cycle.get("provider"), cycle.get("model"))
        named.append(current)
    return named


# ---------------------------------------------------------------- the recorded answers


def _anthropic_text(body: bytes) -> str:
    events = [json.loads(data) for data in sse_data(body)]
    return "".join(
        e["delta"]["text"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )


def _responses_text(body: bytes) -> str:
    events = [json.loads(data) for data in sse_data(body)]
    return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")


def _chat_text(body: bytes) -> str:
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunk_data(body) if c.get("choices")
    )


def _tool_result_openai(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (item["call_id"], item["output"])
        for item in body["input"]
        if item.get("type") == "function_call_output"
    ]


def _tool_result_chat(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


def _tool_result_anthropic(body: dict[str, Any]) -> list[tuple[str, str]]:
    results = []
    for message in body["messages"]:
        if not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                results.append((block["tool_use_id"], text))
    return results


def _anthropic_call_id(body: bytes) -> str:
    events = [json.loads(data) for data in sse_data(body)]
    return str(
        next(
            e["content_block"]["id"]
            for e in events
            if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"
        )
    )


def _responses_call_id(body: bytes) -> str:
    events = [json.loads(data) for data in sse_data(body)]
    return str(
        next(
            e["item"]["call_id"]
            for e in events
            if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"
        )
    )


def _chat_call_id(body: bytes) -> str:
    return str(
        next(
            call["id"]
            for c in chunk_data(body)
            if c.get("choices")
            for call in c["choices"][0]["delta"].get("tool_calls") or []
            if call.get("id")
        )
    )


# ---------------------------------------------------------------- 1. a tool turn per provider


@dataclass(frozen=True)
class Api:
    """One provider as a kernel test drives it."""

    name: str
    options: str  # the %%chat line's options besides --provider and --tools
    env: Callable[[str, Path], dict[str, str]]  # server URL, tmp dir -> the kernel's env
    replies: Callable[[], tuple[list[Reply], str, str]]  # replies, the call id, the final text
    results: Callable[[dict[str, Any]], list[tuple[str, str]]]  # a request's tool results
    model: str  # the model the saved cycles name (as the server named it)


def _openai_replies() -> tuple[list[Reply], str, str]:
    exchanges = openai_recording("test_tool_call_stream.yml")
    return _recorded(exchanges, _responses_call_id, _responses_text)


def _chat_replies() -> tuple[list[Reply], str, str]:
    exchanges = recording("llamacpp/test_tool_call_function.yml")
    return _recorded(exchanges, _chat_call_id, _chat_text)


def _recorded(
    exchanges: list[Exchange], call: Callable[[bytes], str], text: Callable[[bytes], str]
) -> tuple[list[Reply], str, str]:
    return [e.reply() for e in exchanges], call(exchanges[0].body), text(exchanges[-1].body)


def _claude_exchanges() -> list[Exchange]:
    return load_recording(recording_path("test_tool_call_reasoning.yml"))


def _bedrock_replies() -> tuple[list[Reply], str, str]:
    exchanges = _claude_exchanges()
    replies = [bedrock_stream(bedrock_frames(e.body), BEDROCK_ID) for e in exchanges]
    return replies, _anthropic_call_id(exchanges[0].body), _anthropic_text(exchanges[-1].body)


def _vertex_replies() -> tuple[list[Reply], str, str]:
    exchanges = _claude_exchanges()
    path = ("POST", vertex_path(PROJECT, REGION, VERTEX_ID))
    replies = [replace(Reply.sse(e.body), expect=path) for e in exchanges]
    return replies, _anthropic_call_id(exchanges[0].body), _anthropic_text(exchanges[-1].body)


def _openai_env(url: str, tmp: Path) -> dict[str, str]:
    return {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{url}/v1"}


def _no_env(url: str, tmp: Path) -> dict[str, str]:
    return {}


def _aws_env(url: str, tmp: Path) -> dict[str, str]:
    """Fake AWS keys; the AWS config files are empty and no instance metadata is asked."""
    keys = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    return {**aws_env(tmp, **keys), "ANTHROPIC_BEDROCK_BASE_URL": url}


def _google_env(url: str, tmp: Path) -> dict[str, str]:
    """Application default credentials of an authorized user whose token is still valid."""
    return {**google_env(tmp, GOOGLE_TOKEN), "ANTHROPIC_VERTEX_BASE_URL": url}


APIS = [
    Api(
        "openai",
        "--model gpt-5-mini --thinking off",
        _openai_env,
        _openai_replies,
        _tool_result_openai,
        "gpt-5-mini-2025-08-07",
    ),
    Api(
        "openai-chat",
        "--model qwen3.5:9b --base-url {url}/v1",
        _no_env,
        _chat_replies,
        _tool_result_chat,
        "unsloth/Qwen3.5-35B-A3B-GGUF:UD-Q4_K_XL",
    ),
    Api(
        "bedrock",
        f"--model {BEDROCK_ID}",
        _aws_env,
        _bedrock_replies,
        _tool_result_anthropic,
        "claude-haiku-4-5-20251001",
    ),
    Api(
        "vertex",
        f"--model {VERTEX_ID}",
        _google_env,
        _vertex_replies,
        _tool_result_anthropic,
        "claude-haiku-4-5-20251001",
    ),
]


@pytest.mark.parametrize("api", APIS, ids=[api.name for api in APIS])
def test_a_tool_turn_through_each_provider(api: Api, tmp_path: Path) -> None:
    replies, call_id, final_text = api.replies()
    with AnthropicTestServer() as server:
        server.enqueue(*replies)
        kernel = KernelDriver(env=api.env(server.url, tmp_path), cwd=str(tmp_path))
        try:
            kernel.run("%load_ext jupyter_turns")
            kernel.run(TOOL)
            options = api.options.format(url=server.url)
            source = f"%%chat --provider {api.name} {options} --tools unattended\n{PROMPT}"
            cell = kernel.run(source)
            ran = _printed(kernel, "len(ran)")
            published = _published(kernel)
        finally:
            kernel.close()
        server.assert_all_served()
        requests = server.requests
    assert ran == "1", _shown(cell)  # the tool ran in the kernel
    assert len(requests) == 2
    assert api.results(requests[0].body) == []
    assert api.results(requests[1].body) == [(call_id, "working!")]
    record = _final(cell)
    assert _texts(record).endswith(final_text) and final_text
    assert _shows(cell, final_text)
    cycles = record["turn"]["cycles"]
    assert _answered(cycles) == [(api.name, api.model)] * 2
    assert set(cycles[1]) & {"provider", "model"} == set()  # written when they change
    assert [c["stop_reason"] for c in cycles] == ["tool_use", "end_turn"]
    headers = [r.headers for r in requests]
    if api.name == "openai":
        assert all(h["authorization"] == f"Bearer {OPENAI_KEY}" for h in headers)
    elif api.name == "openai-chat":
        assert all(h["authorization"] == "Bearer not-needed" for h in headers)
    elif api.name == "bedrock":
        assert all(h["authorization"].startswith("AWS4-HMAC-SHA256 Credential=") for h in headers)
    else:
        assert all(h["authorization"] == f"Bearer {GOOGLE_TOKEN}" for h in headers)
    assert _leaks(published) == []
    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook_from([(source, cell.outputs)]), path)
    assert _leaks(path.read_text()) == []


# ---------------------------------------------------------------- 2. Claude -> OpenAI -> Claude

ANTHROPIC_KEY = "sk-ant-api03-KERNELTEST-anthropic-key-0123456789"
CLAUDE_THINKING = "The user wants the tool run; I will call it."
SIGNATURE = "EqQBCkYIBxgCKkDclaudesignature"
ENCRYPTED = "gAAAAB-openai-reasoning-encrypted-in-the-kernel=="
OPENAI_SUMMARY = "Reading the converted thread."
MESSAGES = ("POST", "/v1/messages")
USAGE = {
    "input_tokens": 120,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 30,
    "output_tokens_details": {"reasoning_tokens": 12},
    "total_tokens": 150,
}
SWITCH = "Reasoning from another provider (1 block) is kept in the notebook but not sent"
THREAD = "get_ipython().magics_manager.registry['ChatMagics'].session.threads"


def _claude(body: str) -> Reply:
    return Reply.sse(body, expect=MESSAGES)


def _item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def _switch_replies() -> list[Reply]:
    tool = ToolUse("run_me", {"bar": "claude"}, id="toolu_claude")
    thinking = sse_thinking_response(
        [CLAUDE_THINKING], ["Running it."], signature=SIGNATURE, tool=tool
    )
    openai = responses_body(
        [Reasoning([OPENAI_SUMMARY], encrypted=ENCRYPTED), Text(["OpenAI sees ", "one run."])],
        usage=USAGE,
    )
    return [
        _claude(thinking),
        _claude(sse_text_response(["Claude says: ", "it worked."])),
        for_responses(Reply.sse(openai)),
        _claude(sse_text_response(["Back with Claude."])),
        _claude(sse_text_response(["Restored, still Claude."])),
    ]


def _assert_claude_turn_converted(body: dict[str, Any]) -> None:
    """The Responses request holds Claude's turn as text, calls and outputs; no thinking."""
    items = body["input"]
    users = [_item_text(i) for i in items if i.get("role") == "user"]
    assert any("Run the tool, please." in text for text in users)
    [call] = [i for i in items if i.get("type") == "function_call"]
    assert (call["call_id"], call["name"]) == ("toolu_claude", "run_me")
    assert json.loads(call["arguments"]) == {"bar": "claude"}
    [output] = [i for i in items if i.get("type") == "function_call_output"]
    assert (output["call_id"], output["output"]) == ("toolu_claude", "working!")
    said = " ".join(_item_text(i) for i in items if i.get("role") == "assistant")
    assert "Running it." in said and "Claude says: it worked." in said
    assert not [i for i in items if i.get("type") == "reasoning"]
    sent = json.dumps(body)
    assert SIGNATURE not in sent and CLAUDE_THINKING not in sent


def _assert_claude_thinking_back(body: dict[str, Any]) -> None:
    """The Anthropic request holds Claude's own thinking, signed, and not OpenAI's reasoning."""
    blocks = [
        block
        for message in body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
    ]
    thinking = [b for b in blocks if b["type"] == "thinking"]
    assert [(b["thinking"], b["signature"]) for b in thinking] == [(CLAUDE_THINKING, SIGNATURE)]
    assert any(b["type"] == "text" and "OpenAI sees one run." in b["text"] for b in blocks)
    sent = json.dumps(body)
    assert ENCRYPTED not in sent and OPENAI_SUMMARY not in sent


def _switch_env(server: AnthropicTestServer) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": server.url,
        "OPENAI_API_KEY": OPENAI_KEY,
        "OPENAI_BASE_URL": f"{server.url}/v1",
    }


SWITCH_CELLS = [
    "%%chat --provider anthropic --model claude-haiku-4-5 --tools unattended\n"
    "Run the tool, please.",
    "%%chat --provider openai --model gpt-5-mini\nWhat happened?",
    "%%chat --provider anthropic --model claude-haiku-4-5\nAnd you, Claude?",
]


def test_a_thread_goes_from_claude_to_openai_and_back(tmp_path: Path) -> None:
    with AnthropicTestServer() as server:
        server.enqueue(*_switch_replies())
        path = tmp_path / "switched.ipynb"
        nbformat.write(notebook_from([]), path)  # the kernel knows its notebook: its grant
        env = {**_switch_env(server), "JPY_SESSION_NAME": str(path)}
        kernel = KernelDriver(env=env, cwd=str(tmp_path))
        try:
            kernel.run("%load_ext jupyter_turns")
            kernel.run(TOOL)
            cells = [kernel.run(source) for source in SWITCH_CELLS]
            threads = kernel.run("%chat threads").stdout()
            published = _published(kernel)
        finally:
            kernel.close()
        assert [r.path for r in server.requests] == [
            "/v1/messages",
            "/v1/messages",
            "/v1/responses",
            "/v1/messages",
        ]
        _assert_claude_turn_converted(server.requests[2].body)
        _assert_claude_thinking_back(server.requests[3].body)
        assert SWITCH in _shown(cells[1]) and SWITCH in _shown(cells[2])
        assert SWITCH not in _shown(cells[0])
        [reasoning] = [e for e in _final(cells[1])["events"] if e["kind"] == "reasoning"]
        assert reasoning["metadata"]["api"] == "openai-responses"
        assert reasoning["metadata"]["raw_item"]["encrypted_content"] == ENCRYPTED
        named = [n for cell in cells for n in _answered(_final(cell)["turn"]["cycles"])]
        assert [p for p, _ in named] == ["anthropic", "anthropic", "openai", "anthropic"]
        assert "main" in threads
        assert _leaks(published) == []
        saved: list[tuple[str, list[dict[str, Any]]]] = [
            ("%load_ext jupyter_turns", []),
            (TOOL, []),
        ]
        ran = [(source, cell.outputs) for source, cell in zip(SWITCH_CELLS, cells, strict=True)]
        nbformat.write(notebook_from(saved + ran), path)
        assert _leaks(path.read_text()) == []
        fresh = KernelDriver(env=_switch_env(server), cwd=str(tmp_path))
        try:
            fresh.run("%load_ext jupyter_turns")
            restored = fresh.run(f"%chat restore {path}").stdout()
            listed = fresh.run("%chat threads").stdout()
            provider = _printed(fresh, f"{THREAD}.by_name['main'].provider")
            again = fresh.run("%%chat\nOne more?")
        finally:
            fresh.close()
        server.assert_all_served()
        last = server.requests[4]
    events = sum(len(_final(cell)["events"]) for cell in cells)
    assert f"Restored thread 'main': {events} events" in restored, restored
    # the same thread, events, provider and model (the context is measured at its next answer)
    assert listed.partition(", context")[0] == threads.partition(", context")[0]
    turns = f"{len(SWITCH_CELLS)} turns"
    assert threads.startswith(f"* main: {turns}, "), threads
    assert threads.partition("; ")[2].startswith("anthropic claude-haiku-4-5"), threads
    assert provider == "anthropic"
    assert last.path == "/v1/messages"
    _assert_claude_thinking_back(last.body)
    assert "Restored, still Claude." in _texts(_final(again))


# ---------------------------------------------------------------- 3. an OpenAI turn replayed

OPENAI_TURN = (
    "%%chat --provider openai --model gpt-5-mini --thinking off --tools unattended\n" + PROMPT
)
REPLAY_CELLS = ["%load_ext jupyter_turns", TOOL, OPENAI_TURN, "print(ran)"]


def _nbclient(notebook: Any, cwd: Path, env: dict[str, str]) -> Any:
    return execute_notebook(notebook, cwd=cwd, env={**os.environ, **env})


def _messages(notebook: Any) -> list[str]:
    record = cell_record(notebook.cells[2])
    return [e["content"] for e in record["events"] if e["kind"] == "message"]


def test_a_recorded_openai_turn_replays_offline_with_its_tool(tmp_path: Path) -> None:
    exchanges = openai_recording("test_tool_call_stream.yml")
    with AnthropicTestServer() as server:
        server.enqueue_recording(exchanges)
        env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{server.url}/v1"}
        live = _nbclient(
            new_notebook(cells=[new_code_cell(s) for s in REPLAY_CELLS]), tmp_path, env
        )
        server.assert_all_served()
    path = tmp_path / "recorded.ipynb"
    nbformat.write(live, path)
    assert _leaks(path.read_text()) == []
    with AnthropicTestServer() as nowhere:  # no key: a request would have to go here
        offline = {"JUPYTER_TURNS_REPLAY": "auto", "OPENAI_BASE_URL": f"{nowhere.url}/v1"}
        again = _nbclient(nbformat.read(path, as_version=4), tmp_path, offline)
        assert nowhere.requests == []
    record = cell_record(again.cells[2])
    assert record["turn"]["replayed_from"] == "recorded.ipynb"
    assert _messages(again) == _messages(live) and _messages(live)
    assert _messages(live)[-1] == _responses_text(exchanges[-1].body)
    [response] = [e for e in record["events"] if e["kind"] == "tool_call_response"]
    assert response["content"] == "working!" and response["replay"] == {"same": True}
    # the tool ran again in the new kernel: the cell after the chat prints what it appended
    assert again.cells[3].outputs == live.cells[3].outputs
    assert again.cells[3].outputs[0]["text"].startswith("[")
    assert again.cells[3].outputs[0]["text"] != "[]\n"
    live_record = cell_record(live.cells[2])
    named = _answered(live_record["turn"]["cycles"])
    assert named == [("openai", "gpt-5-mini-2025-08-07")] * 2
    # the replay played them (the turn says where from) and still names who answered live
    named = _answered(record["turn"]["cycles"])
    assert named == [("openai", "gpt-5-mini-2025-08-07")] * 2


# ---------------------------------------------------------------- 4. where the OpenAI key goes

TYPED_KEY = "sk-proj-KERNELTEST-typed-for-the-second-server-987654"
DOTENV_KEY = "sk-proj-KERNELTEST-from-a-dotenv-file-555555"


def _type_key(kernel: KernelDriver, key: str) -> Cell:
    """``%chat key openai`` answered through the kernel's stdin channel (a password box)."""
    asked = kernel.execute("%chat key openai")
    request = kernel.kc.get_stdin_msg(timeout=30)
    assert request["msg_type"] == "input_request" and request["content"]["password"] is True
    kernel.kc.input(key)
    kernel.wait(lambda: asked.done, 30, "%chat key openai to finish")
    return asked


def test_an_environment_key_does_not_follow_a_base_url_until_given_there(tmp_path: Path) -> None:
    """The environment's key goes where OPENAI_BASE_URL sends it (``home``), never to a
    thread's ``--base-url`` (``other``): Chat Completions sends the placeholder, Responses
    sends nothing and says to run ``%chat key openai``, which then gives a key for that URL
    (not for the current thread's) and the cell sends it there."""
    with AnthropicTestServer() as home, AnthropicTestServer() as other:
        home.enqueue(for_responses(Reply.sse(responses_body([Text(["Home."])]))))
        other.enqueue(
            chat_reply(chunk_body(["Hello from a local server."])),
            for_responses(Reply.sse(responses_body([Text(["Now with your key."])]))),
        )
        env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{home.url}/v1"}
        kernel = KernelDriver(env=env, cwd=str(tmp_path))
        other_url = f"{other.url}/v1"
        try:
            kernel.run("%load_ext jupyter_turns")
            where = f"--base-url {other_url}"
            chat = kernel.run(f"%%chat --thread local --provider openai-chat --model m {where}\nHi")
            kernel.run("%%chat --thread home --provider openai --model gpt-5-mini\nHi")
            source = f"%%chat --thread resp --provider openai --model gpt-5-mini {where}\nHi"
            refused = kernel.run(source)
            sent_before = len(other.requests)
            asked = _type_key(kernel, TYPED_KEY)
            answered = kernel.run(source)
            published = _published(kernel)
        finally:
            kernel.close()
        home.assert_all_served()
        other.assert_all_served()
        requests = other.requests
    assert home.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent_before == 1  # the Responses thread sent nothing
    assert requests[0].headers["authorization"] == "Bearer not-needed"
    assert "Hello from a local server." in _texts(_final(chat))
    assert "Run %chat key openai to give a key for" in _error(refused)
    assert f"{masked(TYPED_KEY)}; it will be sent to {other_url}" in asked.stdout()
    assert requests[1].path == "/v1/responses"
    assert requests[1].headers["authorization"] == f"Bearer {TYPED_KEY}"
    assert "Now with your key." in _texts(_final(answered))
    assert all(OPENAI_KEY not in json.dumps(r.headers) for r in requests)
    assert _leaks(published) == [] and TYPED_KEY not in published


def test_a_dotenv_key_never_reaches_the_base_url_it_names(tmp_path: Path) -> None:
    with AnthropicTestServer() as user, AnthropicTestServer() as attacker:
        # a slow answer (the live record grows in added outputs, which the end clears): the
        # .env notice, printed while the provider was built, is printed again after the clear
        # (it was lost whenever a loaded machine made the turn slower than a second)
        answer = responses_body([Text(["Hi ", "from ", "your ", "server."])])
        user.enqueue(for_responses(Reply.sse(answer, delay=0.6)))
        (tmp_path / ".env").write_text(
            f"OPENAI_API_KEY={DOTENV_KEY}\nOPENAI_BASE_URL={attacker.url}/v1\n"
        )
        # the user's own endpoint is in the environment, set before the kernel started
        urls = f"{user.url}/v1", f"{attacker.url}/v1"
        kernel = KernelDriver(env={"OPENAI_BASE_URL": urls[0]}, cwd=str(tmp_path))
        try:
            load = kernel.run("%load_ext jupyter_turns")
            cell = kernel.run("%%chat --provider openai --model gpt-5-mini\nHi")
            # the notice is a stream output, which a loaded kernel may flush after the cell's
            # idle (ipykernel gives up waiting on a slow IOPub flush): wait for it as a reader
            # of the cell would, long enough for a machine with both cores busy
            kernel.wait(
                lambda: "NOT applied" in load.stdout() + cell.stdout(), 120, "the .env notice"
            )
            published = _published(kernel)
        finally:
            kernel.close()
        assert attacker.requests == []
        user.assert_all_served()
        [request] = user.requests
    assert request.headers["authorization"] == f"Bearer {DOTENV_KEY}"
    shown = load.stdout() + cell.stdout()
    assert f"sets these, NOT applied:\n  OPENAI_BASE_URL={urls[1]}" in shown, shown
    assert f"OpenAI requests go to {urls[0]} (OPENAI_BASE_URL in this kernel's" in shown
    assert "Hi from your server." in _texts(_final(cell))
    assert DOTENV_KEY not in published


# ---------------------------------------------------------------- 5. the admin's limits

LIMITED = "%config ChatMagics.allowed_providers = ['anthropic']"
NOT_ALLOWED = "the provider 'openai' is not allowed here: ChatMagics.allowed_providers is anthropic"


def _error(cell: Cell) -> str:
    assert cell.reply is not None and cell.reply["status"] == "error", cell.outputs
    return f"{cell.reply['ename']}: {cell.reply['evalue']}"


def test_allowed_providers_holds_for_cells_and_for_granted_saved_settings(tmp_path: Path) -> None:
    path = tmp_path / "openai.ipynb"
    nbformat.write(new_notebook(), path)  # the kernel's notebook, as JupyterLab's
    with AnthropicTestServer() as server:
        server.enqueue(for_responses(Reply.sse(responses_body([Text(["Recorded answer."])]))))
        env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{server.url}/v1"}
        kernel = KernelDriver(env={**env, "JPY_SESSION_NAME": str(path)}, cwd=str(tmp_path))
        try:
            kernel.run("%load_ext jupyter_turns")
            source = "%%chat --provider openai --model gpt-5-mini\nHello"
            recorded = kernel.run(source)
            kernel.run(LIMITED)
            events = _printed(kernel, f"len({THREAD}.by_name['main'].chat.conversation.events)")
            failed = kernel.run("%%chat --provider openai --model gpt-5-nano\nAgain")
            after = _printed(kernel, f"len({THREAD}.by_name['main'].chat.conversation.events)")
            model = _printed(kernel, f"{THREAD}.by_name['main'].model")
        finally:
            kernel.close()
        nbformat.write(notebook_from([(source, recorded.outputs)]), path)
        fresh = KernelDriver(env=env, cwd=str(tmp_path))  # the same JUPYTER_DATA_DIR: granted
        try:
            fresh.run("%load_ext jupyter_turns")
            fresh.run(LIMITED)
            restored = fresh.run(f"%chat restore {path}").stdout()
            provider = _printed(fresh, f"{THREAD}.by_name['main'].provider")
            refused = fresh.run("%%chat\nAgain")
        finally:
            fresh.close()
        server.assert_all_served()
        assert len(server.requests) == 1  # only the recorded turn
    assert NOT_ALLOWED in _error(failed)
    assert (events, after, model) == ("2", "2", "gpt-5-mini")  # the failed cell changed nothing
    assert "Restored thread 'main': 2 events" in restored and "not applied" not in restored
    assert provider == "openai"  # the user granted them in that notebook: they apply
    assert NOT_ALLOWED in _error(refused)  # but never widen the limit
