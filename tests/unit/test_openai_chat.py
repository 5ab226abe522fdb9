"""OpenAIChatProvider and OllamaProvider through the real ``openai`` SDK, against recorded
llama.cpp and OpenRouter exchanges served on 127.0.0.1 (tests/fixtures/openai-chat)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import openai
import pytest

from jupyter_turns import Chat, tool
from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.model.content import Attachment, ImageData
from jupyter_turns.model.events import (
    ChatRequest,
    Finished,
    Flush,
    Message,
    Part,
    Reasoning,
    StreamEvent,
    ToolCall,
    ToolCallRequest,
    ToolCallResponse,
    Usage,
)
from jupyter_turns.providers import endpoints
from jupyter_turns.providers.base import Continuation, Request, ToolSpec
from jupyter_turns.providers.models import model_info
from jupyter_turns.providers.openai_chat import (
    NO_KEY,
    OllamaProvider,
    OpenAIChatProvider,
    ollama_base_url,
)
from jupyter_turns.providers.openai_chat_wire import build_params, chat_messages
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.openai_chat_replies import (
    chat_error,
    chat_reply,
    chunk,
    chunk_body,
    chunk_data,
    recording,
    served_at,
)

from .conftest import FakeClock

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)


def _provider(server: AnthropicTestServer, path: str = "/v1", **kw: Any) -> OpenAIChatProvider:
    kw.setdefault("model", "test-model")
    return OpenAIChatProvider(base_url=server.url + path, **kw)


def _replay(server: AnthropicTestServer, name: str, **kw: Any) -> OpenAIChatProvider:
    exchanges = recording(name)
    server.enqueue_recording(exchanges)
    kw.setdefault("model", exchanges[0].request_body["model"])
    return _provider(server, served_at(exchanges), **kw)


def _chat(provider: OpenAIChatProvider, clock: FakeClock, **kw: Any) -> Chat:
    kw.setdefault("thinking", "off")
    return Chat(provider=provider, sleep=clock.sleep, clock=clock, rand=lambda: 0.5, **kw)


async def _events(provider: OpenAIChatProvider, request: Request) -> list[StreamEvent]:
    return [item async for item in provider.stream(request)]


def _hello(text: str = "Test message") -> Request:
    return Request(events=(ChatRequest(content=text),))


def _joined(events: list[StreamEvent], kind: str) -> str:
    return "".join(
        e.content.text
        for e in events
        if isinstance(e, Part) and e.content.kind == kind and hasattr(e.content, "text")
    )


def _recorded(name: str, *fields: str) -> str:
    """The concatenation of delta ``fields`` (the first present) in a recorded body, read
    apart from the provider."""
    out = []
    for data in chunk_data(recording(name)[0].body):
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            for field in fields:
                if isinstance(delta.get(field), str):
                    out.append(delta[field])
                    break
    return "".join(out)


def _blocks(events: list[StreamEvent]) -> list[tuple[Any, ...]]:
    """Each block's kind and whole content, in index order, and how the stream ended."""
    blocks: dict[int, list[Any]] = {}
    for item in events:
        if isinstance(item, Part):
            content = item.content
            entry = blocks.setdefault(item.index, [content.kind, ""])
            if isinstance(content, ToolCall):
                entry[1] = content
            else:
                entry[1] += content.text
    flushed = [item.index for item in events if isinstance(item, Flush)]
    assert sorted(flushed) == sorted(blocks)  # every block flushed once
    return [tuple(blocks[index]) for index in sorted(blocks)] + [(_finished(events),)]


def _finished(events: list[StreamEvent]) -> Finished:
    assert isinstance(events[-1], Finished)
    return events[-1]


def _text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def _essentials(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages reduced to what they say: text parts joined, tool calls by id, name and parsed
    arguments (servers differ in string vs parts and in incidental fields)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        calls = [
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or []
        ]
        out.append(
            {"role": message["role"], "content": content or None, "calls": calls}
            | ({"tool_call_id": message["tool_call_id"]} if "tool_call_id" in message else {})
        )
    return out


# ---------------------------------------------------------------- recorded streams


@pytest.mark.parametrize(
    ("name", "reasoning_field"),
    [
        ("llamacpp/test_chat_completion_stream.yml", "reasoning_content"),
        ("openrouter/test_chat_completion_stream.yml", "reasoning"),
    ],
)
async def test_plain_stream_becomes_reasoning_then_text(
    server: AnthropicTestServer, name: str, reasoning_field: str
) -> None:
    provider = _replay(server, name)
    events = await _events(provider, _hello())
    text, reasoning = _recorded(name, "content"), _recorded(name, reasoning_field)
    assert text and reasoning
    assert _joined(events, "message") == text and _joined(events, "reasoning") == reasoning
    # the reasoning block is flushed before the text's first part
    kinds = [(type(e).__name__, e.index) for e in events if isinstance(e, Part | Flush)]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, Part) and e.index == 1)
    assert ("Flush", 0) in kinds[:first_text] and kinds[-1] == ("Flush", 1)
    finished = _finished(events)
    assert finished.reason == "end_turn"
    assert finished.model == chunk_data(recording(name)[0].body)[0]["model"]
    sent = server.requests[0]
    recorded = recording(name)[0].request_body
    assert _essentials(sent.body["messages"]) == _essentials(recorded["messages"])
    assert sent.body["model"] == recorded["model"]
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}
    assert "max_tokens" not in sent.body  # a local server may refuse a large one
    server.assert_all_served()


async def test_usage_comes_from_the_final_chunk(server: AnthropicTestServer) -> None:
    provider = _replay(server, "openrouter/test_chat_completion_stream.yml")
    finished = _finished(await _events(provider, _hello()))
    usage = chunk_data(recording("openrouter/test_chat_completion_stream.yml")[0].body)[-1]
    assert finished.usage == Usage(
        input_tokens=usage["usage"]["prompt_tokens"],
        output_tokens=usage["usage"]["completion_tokens"],
    )


async def test_a_stream_without_usage_has_no_usage_and_no_cost(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    provider = _replay(server, "llamacpp/test_chat_completion_stream.yml")
    turn = await _chat(provider, clock).send("Test message")
    assert turn.outcome == "complete" and turn.kinds[-1] == "message"
    [end] = turn.ends
    assert end.usage is None and end.cost_usd is None  # unknown, not zero
    assert turn.cost_usd is None


@pytest.mark.parametrize("vendor", ["anthropic", "google", "minimax", "x-ai"])
async def test_vendor_metadata_streams_parse_and_extra_fields_are_ignored(
    server: AnthropicTestServer, vendor: str
) -> None:
    name = f"openrouter/{vendor}_test_sub_provider_event_metadata.yml"
    provider = _replay(server, name)
    events = await _events(provider, _hello())
    assert _joined(events, "message") == _recorded(name, "content")
    # `reasoning_details` repeats `reasoning`: shown once
    assert _joined(events, "reasoning") == _recorded(name, "reasoning")
    data = chunk_data(recording(name)[0].body)
    usage = next(d["usage"] for d in data if d.get("usage"))
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    finished = _finished(events)
    assert finished.reason == "end_turn" and finished.model == data[0]["model"]
    assert finished.usage == Usage(
        input_tokens=usage["prompt_tokens"] - cached,
        output_tokens=usage["completion_tokens"],
        cache_read_input_tokens=cached,
    )
    if vendor == "x-ai":
        assert cached == 192  # the one with a cache read


async def test_reasoning_only_in_reasoning_details_is_shown(server: AnthropicTestServer) -> None:
    details = [{"type": "reasoning.text", "text": "Thinking it over", "index": 0}]
    encrypted = [{"type": "reasoning.encrypted", "data": "opaque", "index": 1}]
    body = [
        chunk({"role": "assistant", "content": "", "reasoning_details": details}),
        chunk({"content": "", "reasoning_details": encrypted}),
        chunk({"content": "Done."}),
        chunk({}, "stop"),
    ]
    server.enqueue(chat_reply("".join(f"data: {json.dumps(c)}\n\n" for c in body)))
    events = await _events(_provider(server), _hello())
    assert _joined(events, "reasoning") == "Thinking it over"
    assert _joined(events, "message") == "Done."


# ---------------------------------------------------------------- tools


def _run_me(result: str) -> Any:
    @tool(run="unattended")
    def run_me(bar: str | list[str], foo: str = "foo") -> str:
        """A test tool."""
        return result

    return run_me


@pytest.mark.parametrize(
    "name",
    [
        "llamacpp/test_tool_call_function.yml",
        "llamacpp/test_tool_call_reasoning.yml",
        "openrouter/test_tool_call_stream.yml",
    ],
)
async def test_tool_round_trip_through_chat_send(
    server: AnthropicTestServer, clock: FakeClock, name: str
) -> None:
    exchanges = recording(name)
    provider = _replay(server, name)
    chat = _chat(provider, clock, tools=[_run_me("working!")])
    turn = await chat.send(_text_of(exchanges[0].request_body["messages"][-1]))
    assert turn.outcome == "complete"
    assert "tool_call_request" in turn.kinds and turn.kinds[-1] == "message"
    [request] = [e for e in turn.events if isinstance(e, ToolCallRequest)]
    [response] = [e for e in turn.events if isinstance(e, ToolCallResponse)]
    recorded_call = exchanges[1].request_body["messages"][1]["tool_calls"][0]
    assert request.call_id == recorded_call["id"] and request.name == "run_me"
    assert request.arguments == json.loads(recorded_call["function"]["arguments"])
    assert response.content == "working!" and not response.is_error
    sent = server.requests[0].body
    assert sent["tools"][0]["type"] == "function"
    assert sent["tools"][0]["function"]["name"] == "run_me"
    assert sent["tool_choice"] == "auto"
    ours, theirs = server.requests[1].body["messages"], exchanges[1].request_body["messages"]
    assert _essentials(ours) == _essentials(theirs)
    assert [m["role"] for m in ours] == ["user", "assistant", "tool"]
    assert not any("reasoning" in m or "reasoning_content" in m for m in ours)
    server.assert_all_served()


async def test_parallel_tool_calls_round_trip(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    name = "openrouter/test_anthropic_opus_5_parallel_tool_round_trip.yml"
    exchanges = recording(name)

    @tool(run="unattended")
    def list_items() -> str:
        """List the items."""
        return "list_items completed"

    @tool(run="unattended")
    def search_items() -> str:
        """Search the items."""
        return "search_items completed"

    provider = _replay(server, name)
    chat = _chat(provider, clock, tools=[list_items, search_items])
    turn = await chat.send(exchanges[0].request_body["messages"][0]["content"][0]["text"])
    assert turn.outcome == "complete"
    calls = [e for e in turn.events if isinstance(e, ToolCallRequest)]
    assert [c.name for c in calls] == ["list_items", "search_items"]
    ours, theirs = server.requests[1].body["messages"], exchanges[1].request_body["messages"]
    assert _essentials(ours) == _essentials(theirs)
    assert [m["role"] for m in ours] == ["user", "assistant", "tool", "tool"]
    # usage of both responses, priced as the model the server named
    assert len(turn.cycle_usage) == 2 and all(u is not None for u, _ in turn.cycle_usage)
    assert turn.cost_usd == pytest.approx(model_info("anthropic/claude-opus-5").cost(turn.usage))
    assert turn.cost_usd is not None and turn.cost_usd > 0
    server.assert_all_served()


async def test_multi_turn_recording_sends_the_growing_conversation(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    name = "llamacpp/test_multi_turn_conversation.yml"
    exchanges = recording(name)
    chat = _chat(_replay(server, name), clock, tools=[_run_me("The secret code is: 42")])
    for number in (0, 1, 2, 4):  # exchange 3 is the answer to the tool's result
        await chat.send(exchanges[number].request_body["messages"][-1]["content"])
    for number in range(1, 5):
        ours = server.requests[number].body["messages"]
        assert _essentials(ours) == _essentials(exchanges[number].request_body["messages"])
    server.assert_all_served()


def _arguments_body(pieces: list[str], call_id: str = "call_1") -> str:
    first = {"index": 0, "id": call_id, "type": "function", "function": {"name": "run_me"}}
    chunks = [chunk({"role": "assistant", "tool_calls": [first]})]
    chunks += [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in pieces
    ]
    chunks.append(chunk({}, "tool_calls"))
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


async def test_tool_arguments_that_are_not_json_become_a_parse_error(
    server: AnthropicTestServer,
) -> None:
    server.enqueue(chat_reply(_arguments_body(['{"foo": ', "oops"])))
    events = await _events(_provider(server), _hello())
    [call] = [e.content for e in events if isinstance(e, Part) and isinstance(e.content, ToolCall)]
    assert call.parse_error and "invalid JSON" in call.parse_error
    assert call.raw_arguments == '{"foo": oops' and call.arguments == {}
    assert _finished(events).reason == "tool_use"


# ---------------------------------------------------------------- requests


async def test_image_attachment_goes_as_a_data_url(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    name = "llamacpp/test_image_attachment.yml"
    recorded = recording(name)[0].request_body["messages"][0]["content"][0]["image_url"]["url"]
    media, _, data = recorded.removeprefix("data:").partition(";base64,")
    image = ImageData(media_type=media, data=data)
    attachment = Attachment(label="@fruit", text="a photo", images=[image])
    turn = await _chat(_replay(server, name), clock).send(
        "What fruit is in this image?", [attachment]
    )
    assert turn.kinds[-1] == "message" and turn.events[-1].content == "apple"  # type: ignore[union-attr]
    [user] = [m for m in server.requests[0].body["messages"] if m["role"] == "user"]
    parts = user["content"]
    assert parts[0] == {"type": "text", "text": "What fruit is in this image?"}
    assert parts[1]["type"] == "text" and "<notebook_data" in parts[1]["text"]
    assert "@fruit" in parts[1]["text"] and "a photo" in parts[1]["text"]
    assert parts[2] == {"type": "image_url", "image_url": {"url": recorded}}


def _tool_turn(*images: ImageData) -> list[Any]:
    return [
        ChatRequest(content="plot both"),
        Reasoning(content="secret thoughts", metadata={"signature": "sig"}),
        Message(content="Plotting."),
        ToolCallRequest(call_id="c1", name="plot", arguments={"n": 1}),
        ToolCallRequest(call_id="c2", name="plot", arguments={"n": 2}),
        ToolCallResponse(call_id="c1", content="figure 1", images=list(images)),
        ToolCallResponse(call_id="c2", content="figure 2", images=list(images)),
    ]


def test_tool_images_follow_the_results_in_a_labelled_user_message() -> None:
    image = ImageData(media_type="image/png", data="iVBORw0KGgo=")
    messages = chat_messages(_tool_turn(image), "Be brief.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = messages[2]
    assert assistant["content"] == "Plotting."
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ['{"n": 1}', '{"n": 2}']
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": "figure 1"}
    parts = messages[5]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url"]
    assert "plot tool (call c1)" in parts[0]["text"] and "(call c2)" in parts[2]["text"]
    assert parts[1]["image_url"]["url"] == "data:image/png;base64,iVBORw0KGgo="
    assert "secret thoughts" not in json.dumps(messages)  # reasoning is never sent


def test_what_is_never_sent() -> None:
    from jupyter_turns.model.events import Block

    events = [
        ChatRequest(content="hi"),
        Block(metadata={"raw_block": {"type": "redacted_thinking", "data": "x"}}),
        Reasoning(content="hmm"),
        Message(content="nested", parent="sub1"),
        Message(content="Hello"),
    ]
    assert chat_messages(events) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello"},
    ]


def test_request_settings() -> None:
    spec = ToolSpec("plot", "Plot it.", {"type": "object", "properties": {}})
    request = Request(events=(ChatRequest(content="hi"),), tools=(spec,), tool_choice="any")
    params = build_params(request, "m")
    assert params["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "plot",
                "description": "Plot it.",
                "parameters": spec.input_schema,
            },
        }
    ]
    assert params["tool_choice"] == "required" and "max_tokens" not in params
    none = build_params(Request(events=request.events, tools=(spec,), tool_choice="none"), "m")
    assert none["tool_choice"] == "none"
    capped = build_params(Request(events=request.events, max_tokens=512), "m", stream=False)
    assert capped["max_tokens"] == 512 and "stream_options" not in capped
    assert capped["stream"] is False and "tools" not in capped


def test_continuation_quotes_the_partial_answer() -> None:
    request = Request(
        events=(ChatRequest(content="Tell a story"),),
        continuation=Continuation("Once upon a time"),
    )
    messages = build_params(request, "m")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == "Once upon a time"
    assert "<answer_end>Once upon a time</answer_end>" in messages[2]["content"]


# ---------------------------------------------------------------- keys


async def test_no_key_is_needed_for_a_local_server(
    server: AnthropicTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # for api.openai.com, not this server
    server.enqueue(chat_reply(chunk_body(["Hi"])))
    events = await _events(_provider(server), _hello())
    assert _joined(events, "message") == "Hi"
    sent = server.requests[0]
    assert sent.headers["authorization"] == f"Bearer {NO_KEY}"
    assert SECRET.encode() not in sent.raw and SECRET not in json.dumps(sent.headers)


async def test_the_environment_key_goes_with_the_environment_endpoint(
    server: AnthropicTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.enqueue(chat_reply(chunk_body(["Hi"])))
    await _events(OpenAIChatProvider("test-model"), _hello())
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_a_key_bound_to_another_endpoint_is_not_sent(
    server: AnthropicTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = SECRET + "bound"
    endpoints.bind(key, "%chat key")  # given for the Anthropic endpoint in use
    provider = _provider(server, key_source=lambda: key)
    server.enqueue(chat_error(401, "Missing bearer token", code="invalid_api_key"))
    with pytest.raises(openai.AuthenticationError) as raised:
        await _events(provider, _hello())
    assert server.requests[0].headers["authorization"] == f"Bearer {NO_KEY}"
    error = provider.classify(raised.value)
    assert error.kind == "auth" and not error.retryable
    assert "was given for" in error.message and "%chat key openai" in error.message
    assert key not in error.message and "Missing bearer token" in error.message


async def test_a_key_from_the_source_goes_only_where_it_was_given(
    server: AnthropicTestServer,
) -> None:
    key = SECRET + "fresh"  # nobody bound it: it goes where OPENAI_BASE_URL sends it, not here
    server.enqueue(chat_reply(chunk_body(["Hi"])), chat_reply(chunk_body(["Hi"])))
    await _events(_provider(server, key_source=lambda: key), _hello())
    assert server.requests[0].headers["authorization"] == f"Bearer {NO_KEY}"
    endpoints.bind_to(key, "%chat key openai", f"{server.url}/v1")  # given for this server
    await _events(_provider(server, key_source=lambda: key), _hello())
    assert server.requests[1].headers["authorization"] == f"Bearer {key}"


async def test_401_without_a_key_says_how_to_give_one(server: AnthropicTestServer) -> None:
    provider = _provider(server)
    server.enqueue(chat_error(401, "No auth credentials found"))
    with pytest.raises(openai.AuthenticationError) as raised:
        await _events(provider, _hello())
    error = provider.classify(raised.value)
    assert error.kind == "auth" and error.status == 401
    assert f"{server.url}/v1 asks for an API key, and none was sent to it" in error.message
    assert "no API key was given" in error.message
    assert "%chat key openai" in error.message and "OPENAI_API_KEY" in error.message


# ---------------------------------------------------------------- configuration


def test_the_base_url_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderConfigError) as raised:
        OpenAIChatProvider("m")
    for words in ("--base-url URL", "%config ChatMagics.base_url", "OPENAI_BASE_URL"):
        assert words in raised.value.message
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert OpenAIChatProvider("m").endpoint == "http://127.0.0.1:9/v1"


def test_the_model_is_required() -> None:
    with pytest.raises(ProviderConfigError, match="--model"):
        OpenAIChatProvider(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ProviderConfigError, match="`ollama list`"):
        OllamaProvider()


def test_ollama_base_url_reads_ollama_host() -> None:
    assert ollama_base_url({}) == "http://localhost:11434/v1"
    assert ollama_base_url({"OLLAMA_HOST": "0.0.0.0"}) == "http://0.0.0.0:11434/v1"
    assert ollama_base_url({"OLLAMA_HOST": "gpu-box:8080"}) == "http://gpu-box:8080/v1"
    assert ollama_base_url({"OLLAMA_HOST": "https://ollama.example"}) == (
        "https://ollama.example:443/v1"
    )
    provider = OllamaProvider("llama3.2")
    assert provider.name == "ollama" and provider.endpoint == "http://localhost:11434/v1"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again: nothing listens there


async def test_nothing_answering_at_ollama_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    port = _closed_port()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    provider = OllamaProvider("llama3.2")
    with pytest.raises(Exception) as raised:
        await _events(provider, _hello())
    error = provider.classify(raised.value)
    assert error.kind == "connection" and not error.retryable
    assert f"Nothing answers at http://127.0.0.1:{port} — is Ollama running?" in error.message
    assert "`ollama serve`" in error.message


# ---------------------------------------------------------------- --stream off


def _completion(name: str) -> dict[str, Any]:
    """The whole answer a recorded stream adds up to, as a ChatCompletion body (assembled
    here, apart from the provider)."""
    data = chunk_data(recording(name)[0].body)
    message: dict[str, Any] = {"role": "assistant", "content": "", "reasoning_content": ""}
    calls: dict[int, dict[str, Any]] = {}
    finish, usage = None, None
    for item in data:
        usage = item.get("usage") or usage
        for choice in item.get("choices") or []:
            delta = choice.get("delta") or {}
            message["content"] += delta.get("content") or ""
            message["reasoning_content"] += delta.get("reasoning_content") or ""
            for piece in delta.get("tool_calls") or []:
                call = calls.setdefault(
                    piece["index"], {"type": "function", "function": {"arguments": ""}}
                )
                call["id"] = piece.get("id") or call.get("id")
                function = piece.get("function") or {}
                call["function"]["name"] = function.get("name") or call["function"].get("name")
                call["function"]["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    if calls:
        message["tool_calls"] = list(calls.values())
    completion = {"id": "c", "object": "chat.completion", "created": 1, "model": data[0]["model"]}
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return completion | {"choices": [choice]} | ({"usage": usage} if usage else {})


@pytest.mark.parametrize(
    "name", ["llamacpp/test_tool_call_reasoning.yml", "openrouter/test_image_attachment.yml"]
)
async def test_stream_off_gives_the_same_events(server: AnthropicTestServer, name: str) -> None:
    exchanges = recording(name)
    path = served_at(exchanges)
    server.enqueue(exchanges[0].reply())
    streamed = await _events(_provider(server, path), _hello())
    plain = _provider(server, path)
    plain.streaming = False
    whole = replace(Reply.json(200, _completion(name)), expect=("POST", exchanges[0].path))
    server.enqueue(whole)
    events = await _events(plain, _hello())

    assert _blocks(events) == _blocks(streamed)
    assert _finished(events) == _finished(streamed)
    assert server.requests[1].body["stream"] is False
    assert "stream_options" not in server.requests[1].body
    server.assert_all_served()


async def test_a_server_that_answers_a_stream_request_with_json(
    server: AnthropicTestServer,
) -> None:
    body = _completion("llamacpp/test_image_attachment.yml")
    server.enqueue(replace(Reply.json(200, body), expect=("POST", "/v1/chat/completions")))
    events = await _events(_provider(server), _hello())
    assert _joined(events, "message") == "apple" and _finished(events).reason == "end_turn"
