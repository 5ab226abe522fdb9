"""OpenAIResponsesProvider through the real openai SDK against the local server: the recorded
Responses exchanges (tests/fixtures/openai), hand-made streams, and the request it sends."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.model.content import Attachment, ImageData
from jupyter_turns.model.events import (
    Block,
    ChatRequest,
    ErrorEvent,
    Finished,
    Message,
    Notice,
    Reasoning,
    ToolCallRequest,
    ToolCallResponse,
    Usage,
)
from jupyter_turns.model.interrupt import InterruptAction, InterruptChoice
from jupyter_turns.providers.base import Continuation, Request, ToolSpec
from jupyter_turns.providers.models import model_info
from jupyter_turns.providers.openai_responses import (
    DEFAULT_BASE_URL,
    DEFAULT_MODEL,
    OpenAIResponsesProvider,
    build_params,
    effort,
)
from jupyter_turns.providers.openai_wire import responses_input
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.openai_sse import (
    Call,
    Text,
    for_responses,
    openai_recording,
    responses_body,
    responses_event,
)
from tests.support.openai_sse import (
    Reasoning as ReasoningOut,
)

from .conftest import FakeClock

MINI = "gpt-5-mini"


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _provider(server: AnthropicTestServer, model: str = MINI) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(model, api_key="sk-test-openai", base_url=f"{server.url}/v1")


def _chat(server: AnthropicTestServer, clock: FakeClock, **kw: Any) -> Chat:
    kw.setdefault("provider", _provider(server, kw.pop("model", MINI)))
    kw.setdefault("thinking", "off")
    return Chat(sleep=clock.sleep, clock=clock, rand=lambda: 0.5, **kw)


def _serve(server: AnthropicTestServer, *bodies: str) -> None:
    server.enqueue(*(for_responses(Reply.sse(body)) for body in bodies))


def _events(body: bytes) -> list[dict[str, Any]]:
    """The JSON of every SSE data line, parsed independently of the SDK."""
    return [
        json.loads(line[len("data: ") :])
        for line in body.decode().splitlines()
        if line.startswith("data: ")
    ]


def _joined(body: bytes, event_type: str) -> str:
    return "".join(e["delta"] for e in _events(body) if e["type"] == event_type)


def _done_items(body: bytes, item_type: str) -> list[dict[str, Any]]:
    return [
        e["item"]
        for e in _events(body)
        if e["type"] == "response.output_item.done" and e["item"]["type"] == item_type
    ]


def _final(body: bytes) -> dict[str, Any]:
    [done] = [e for e in _events(body) if e["type"] == "response.completed"]
    response: dict[str, Any] = done["response"]
    return response


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def _essentials(items: list[dict[str, Any]]) -> list[Any]:
    """Input items reduced to what they say: a message's role and text (an empty system
    message left out), a reasoning item whole, a call's id, name and parsed arguments."""
    out: list[Any] = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            if item["role"] == "system" and not item["content"]:
                continue
            out.append((item["role"], _text_of(item["content"])))
        elif kind == "function_call":
            out.append((kind, item["call_id"], item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            out.append((kind, item["call_id"], item["output"]))
        else:
            out.append(item)
    return out


def _run_me(result: str) -> Any:
    @tool(run="unattended")
    def run_me(bar: str | list[str], foo: str = "foo") -> str:
        """A test tool."""
        return result

    return run_me


_HELLO = responses_body(
    [Text(["Hello", " there", ", wörld 🙂"])],
    usage={"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 4},
)

# ---------------------------------------------------------------- recorded exchanges


async def test_text_recording_streams_reasoning_summary_and_answer(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    [exchange] = openai_recording("test_chat_completion_stream.yml")
    server.enqueue_recording([exchange])
    turn = await _chat(server, clock, thinking=4000).send("Test message")
    assert turn.kinds == ["chat_request", "reasoning", "message"]
    reasoning, message = turn.events[1], turn.events[2]
    assert isinstance(reasoning, Reasoning) and isinstance(message, Message)
    assert reasoning.content == _joined(exchange.body, "response.reasoning_summary_text.delta")
    [item] = _done_items(exchange.body, "reasoning")
    assert reasoning.metadata == {"api": "openai-responses", "raw_item": item}
    assert item["encrypted_content"]  # what makes it worth sending back
    assert message.content == _joined(exchange.body, "response.output_text.delta")
    sent, recorded = server.requests[0], exchange.request_body
    assert sent.path == "/v1/responses"
    assert sent.headers["authorization"] == "Bearer sk-test-openai"
    for name in ("model", "store", "stream", "include", "reasoning"):
        assert sent.body[name] == recorded[name], name
    assert _essentials(sent.body["input"]) == _essentials(recorded["input"])
    usage = _final(exchange.body)["usage"]
    assert turn.usage == Usage(usage["input_tokens"], usage["output_tokens"], 0, 0)
    assert turn.cost_usd == pytest.approx(
        (usage["input_tokens"] * 0.25 + usage["output_tokens"] * 2.0) / 1e6
    )
    server.assert_all_served()


@pytest.mark.parametrize(
    ("name", "thinking"),
    [("test_tool_call_required_reasoning.yml", 4000), ("test_tool_call_stream.yml", "off")],
)
async def test_a_tool_turn_sends_reasoning_and_the_call_back_with_its_output(
    server: AnthropicTestServer, clock: FakeClock, name: str, thinking: Any
) -> None:
    exchanges = openai_recording(name)
    server.enqueue_recording(exchanges)
    chat = _chat(server, clock, thinking=thinking, tools=[_run_me("working!")])
    turn = await chat.send("Please run the tool, providing whatever arguments you want.")
    kinds = turn.kinds
    assert kinds.index("tool_call_request") + 1 == kinds.index("tool_call_response")
    assert kinds[-1] == "message"
    assert turn.outcome == "complete" and len(server.requests) == 2
    [call] = [e for e in turn if isinstance(e, ToolCallRequest)]
    [recorded_call] = _done_items(exchanges[0].body, "function_call")
    assert (call.call_id, call.name) == (recorded_call["call_id"], "run_me")
    assert call.arguments == json.loads(recorded_call["arguments"])
    second = server.requests[1].body["input"]
    # the reasoning item goes back exactly as received: encrypted_content and all
    assert _essentials(second) == _essentials(exchanges[1].request_body["input"])
    reasoning_sent = [item for item in second if item.get("type") == "reasoning"]
    assert reasoning_sent == _done_items(exchanges[0].body, "reasoning")[: len(reasoning_sent)]
    assert turn.text == _joined(exchanges[1].body, "response.output_text.delta")
    assert [usage.output_tokens for usage, _ in turn.cycle_usage] == [
        _final(e.body)["usage"]["output_tokens"] for e in exchanges
    ]
    server.assert_all_served()


def test_the_first_request_carries_what_the_recording_carries() -> None:
    [first, _] = openai_recording("test_tool_call_required_reasoning.yml")
    recorded = first.request_body
    schema = recorded["tools"][0]["parameters"]
    request = Request(
        events=(ChatRequest(content=_text_of(recorded["input"][1]["content"])),),
        tools=(ToolSpec("run_me", "A test tool.", schema),),
        thinking=4000,
        tool_choice="any",
    )
    params = build_params(request, "gpt-5-mini")
    for name in ("model", "store", "stream", "include", "reasoning", "tool_choice"):
        assert params[name] == recorded[name], name
    assert params["tools"] == [
        {
            "type": "function",
            "name": "run_me",
            "description": "A test tool.",
            "parameters": schema,
            "strict": False,
        }
    ]
    assert _essentials(params["input"]) == _essentials(recorded["input"])
    assert params["prompt_cache_key"] == f"jupyter-turns:{request.events[0].id}"


async def test_cached_and_cache_written_tokens_map_to_anthropic_usage(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    exchanges = openai_recording("test_gpt_5_6_prompt_cache_read_after_write.yml")
    server.enqueue_recording(exchanges)
    chat = _chat(server, clock, model="gpt-5.6")
    finals = [_final(e.body) for e in exchanges]
    turns = [await chat.send("What animal jumps over the dog?")]
    turns.append(await chat.send("And what animal gets jumped over?"))
    for turn, final in zip(turns, finals, strict=True):
        usage, details = final["usage"], final["usage"]["input_tokens_details"]
        cached, written = details["cached_tokens"], details["cache_write_tokens"]
        assert turn.usage == Usage(
            usage["input_tokens"] - cached - written, usage["output_tokens"], cached, written
        )
        assert turn.cost_usd is None  # gpt-5.6 is not in the price table: no invented cost
    assert turns[1].usage.cache_read_input_tokens == 4064
    for sent, exchange in zip(server.requests, exchanges, strict=True):
        assert sent.body["reasoning"] == exchange.request_body["reasoning"]  # effort "none"
        assert "include" not in sent.body  # no reasoning to keep
    assert (
        server.requests[0].body["prompt_cache_key"] == server.requests[1].body["prompt_cache_key"]
    )
    second = server.requests[1].body["input"]
    assert second[1]["id"] == _done_items(exchanges[0].body, "message")[0]["id"]
    assert second[1]["content"][0]["text"] == "The fox."


async def test_an_image_attachment_goes_as_an_input_image_data_url(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    [exchange] = openai_recording("test_image_attachment.yml")
    server.enqueue_recording([exchange])
    recorded_image = exchange.request_body["input"][1]["content"][1]["image_url"]
    media_type, data = re.fullmatch(r"data:(.+?);base64,(.+)", recorded_image).groups()  # type: ignore[union-attr]
    image = ImageData(media_type=media_type, data=data)  # type: ignore[arg-type]
    attachment = Attachment(label="banana.jpg", source="file", images=[image])
    question = exchange.request_body["input"][2]["content"]
    turn = await _chat(server, clock).send(question, [attachment])
    assert turn.text == "apple"  # what the recorded model answered
    [user] = server.requests[0].body["input"]
    images = [p for p in user["content"] if p["type"] == "input_image"]
    assert [p["image_url"] for p in images] == [recorded_image]
    texts = [p["text"] for p in user["content"] if p["type"] == "input_text"]
    assert texts[0] == question and 'source="file banana.jpg"' in texts[1]


async def test_stream_off_replays_the_whole_response_into_the_same_events(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    exchanges = openai_recording("test_tool_call_required_reasoning.yml")
    server.enqueue_recording(exchanges)
    chat = _chat(server, clock, thinking=4000, tools=[_run_me("working!")])
    streamed_server_turn = await chat.send("Please run the tool.")
    whole = [
        for_responses(Reply.json(200, _final(e.body)))
        for e in exchanges  # the same responses, as one JSON body each
    ]
    server.enqueue(*whole)
    provider = _provider(server)
    provider.streaming = False
    plain_chat = _chat(server, clock, thinking=4000, tools=[_run_me("working!")], provider=provider)
    plain_turn = await plain_chat.send("Please run the tool.")

    def said(turn: Any) -> list[Any]:
        """What each event says; the API encrypts the reasoning anew for the final response."""
        out = []
        for event in turn:
            if event.kind in ("reasoning", "message", "tool_call_request"):
                metadata = dict(event.metadata)
                if "raw_item" in metadata:
                    metadata["raw_item"] = {**metadata["raw_item"], "encrypted_content": "…"}
                out.append((event.kind, getattr(event, "content", None), metadata))
        return out

    assert said(plain_turn) == said(streamed_server_turn)
    [reasoning] = [e for e in plain_turn if isinstance(e, Reasoning)][:1]
    assert reasoning.metadata["raw_item"] == _final(exchanges[0].body)["output"][0]
    assert plain_turn.usage == streamed_server_turn.usage
    assert [r.body["stream"] for r in server.requests[2:]] == [False, False]
    server.assert_all_served()


# ---------------------------------------------------------------- what is never sent


def test_other_apis_reasoning_blocks_and_sub_agents_are_not_sent() -> None:
    own = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    events = [
        ChatRequest(content="hi"),
        Reasoning(content="Claude thinks", metadata={"signature": "EqQBsig=="}),
        Reasoning(content="a Chat Completions server thought"),
        Reasoning(content="", metadata={"api": "openai-responses", "raw_item": own}),
        Block(metadata={"raw_block": {"type": "redacted_thinking", "data": "xyz"}}),
        Message(content="sub-agent text", parent="call_9"),
        Message(content="Hello"),
    ]
    assert responses_input(events) == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        own,
        {"type": "message", "role": "assistant", "content": "Hello"},
    ]


def test_a_tool_result_with_images_carries_them_in_its_output() -> None:
    image = ImageData(media_type="image/png", data="iVBORw0KGgo=")
    events = [
        ChatRequest(content="plot it"),
        ToolCallRequest(call_id="call_1", name="plot", arguments={"n": 1}),
        ToolCallResponse(call_id="call_1", content="a figure", images=[image]),
        ToolCallRequest(call_id="call_2", name="plot", arguments={}),
        ToolCallResponse(call_id="call_2", content="no such column", is_error=True),
    ]
    items = responses_input(events)
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "plot",
        "arguments": '{"n": 1}',
    }
    assert items[2]["output"] == [
        {"type": "input_text", "text": "a figure"},
        {
            "type": "input_image",
            "image_url": "data:image/png;base64,iVBORw0KGgo=",
            "detail": "auto",
        },
    ]
    assert items[4]["output"] == "Error: no such column"


# ---------------------------------------------------------------- stream shapes


async def test_a_summary_less_reasoning_item_still_flushes_and_goes_back(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    _serve(
        server,
        responses_body([ReasoningOut(encrypted="enc-1"), Call("run_me", ['{"bar":', '"foo"}'])]),
        _HELLO,
    )
    turn = await _chat(server, clock, thinking=4000, tools=[_run_me("ok")]).send("go")
    [reasoning] = [e for e in turn if isinstance(e, Reasoning)]
    assert (
        reasoning.content == "" and reasoning.metadata["raw_item"]["encrypted_content"] == "enc-1"
    )
    second = server.requests[1].body["input"]
    assert [item["type"] for item in second] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert second[1]["encrypted_content"] == "enc-1" and second[3]["output"] == "ok"


async def test_bad_json_arguments_become_a_parse_error_answered_as_an_error(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    _serve(server, responses_body([Call("run_me", ['{"bar": "fo'], call_id="call_cut")]), _HELLO)
    turn = await _chat(server, clock, tools=[_run_me("never")]).send("go")
    [response] = [e for e in turn if isinstance(e, ToolCallResponse)]
    assert response.is_error and "Could not parse" in response.content
    output = server.requests[1].body["input"][-1]
    assert output["call_id"] == "call_cut" and output["output"].startswith("Error")


async def test_unknown_events_and_items_pass_and_are_noted(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    mystery = {"type": "response.telemetry", "data": {"y": 2}}
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed"}
    body = _HELLO.replace(
        "event: response.completed",
        responses_event(mystery)
        + responses_event({"type": "response.output_item.done", "output_index": 1, "item": search})
        + "event: response.completed",
    )
    _serve(server, body, _HELLO)
    chat = _chat(server, clock)
    turn = await chat.send("hi")
    assert turn.text == "Hello there, wörld 🙂" and turn.outcome == "complete"
    [notice] = [e for e in turn if isinstance(e, Notice)]
    assert [e["type"] for e in notice.data] == ["response.telemetry", "response.output_item.done"]
    await chat.send("next")
    assert [item.get("id") for item in server.requests[1].body["input"]] == [
        None,
        "item_0",
        None,
    ]  # the web search call is not sent back


async def test_refusal_is_shown_and_ends_with_reason_refusal(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    _serve(server, responses_body([Text(["I can't help", " with that."], refusal=True)]))
    turn = await _chat(server, clock).send("go")
    assert turn.text == "I can't help with that."
    notice = turn.events[-1]
    assert isinstance(notice, Notice) and "declined" in notice.text


async def test_max_output_tokens_keeps_the_answer_and_offers_continue(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    cut = responses_body([Text(["The quick"])], status="incomplete", incomplete="max_output_tokens")
    _serve(server, cut, responses_body([Text([" brown fox."])]))
    offered: list[Any] = []

    def menu(context: Any) -> InterruptChoice:
        offered.append(context)
        return InterruptChoice(InterruptAction.CONTINUE)

    chat = _chat(server, clock, prompter=PolicyPrompter(interrupt=menu))
    turn = await chat.send("go")
    assert "max_tokens" in offered[0].reason
    assert turn.text == "The quick brown fox."
    last = server.requests[1].body["input"]
    assert last[-2] == {"type": "message", "role": "assistant", "content": "The quick"}
    assert "<answer_end>The quick</answer_end>" in last[-1]["content"][0]["text"]


async def test_a_failed_response_is_an_error_the_user_sees(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    failed = responses_event(
        {
            "type": "response.failed",
            "response": {"status": "failed", "error": {"code": "invalid_prompt", "message": "no"}},
        }
    )
    _serve(server, _HELLO.split("event: response.output_item.added")[0] + failed)
    turn = await _chat(server, clock).send("go")
    error = turn.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "bad_request"
    assert "invalid_prompt" in error.message and clock.sleeps == []


def test_usage_none_when_the_server_sends_none() -> None:
    from jupyter_turns.providers.openai_stream import ResponsesAdapter

    adapter = ResponsesAdapter()
    body = responses_body([Text(["hi"])], usage=None)
    finished = [item for e in _events(body.encode()) for item in adapter.feed(e)][-1]
    assert isinstance(finished, Finished) and finished.usage is None
    assert finished.reason == "end_turn" and finished.model == "gpt-5-mini-2025-08-07"


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("model", "thinking", "expected"),
    [
        ("gpt-5-mini", "off", "minimal"),
        ("gpt-5.1", "off", "none"),
        ("gpt-5.6", "off", "none"),
        ("o4-mini", "off", "low"),
        ("gpt-5-mini", "adaptive", "medium"),
        ("gpt-5-mini", 2_000, "low"),
        ("gpt-5-mini", 16_384, "medium"),
        ("gpt-5-mini", 32_000, "high"),
        ("gpt-5-pro", "off", "high"),
        ("gpt-4.1", "adaptive", None),
        ("gpt-4o-2024-08-06", 32_000, None),
    ],
)
def test_thinking_maps_to_reasoning_effort(model: str, thinking: Any, expected: str | None) -> None:
    assert effort(thinking, model_info(model)) == expected
    params = build_params(Request(events=(ChatRequest(content="x"),), thinking=thinking), model)
    assert params.get("reasoning", {}).get("effort") == expected


def test_request_settings() -> None:
    request = Request(
        events=(ChatRequest(content="hello"),),
        tools=(ToolSpec("a", "A", {"type": "object"}),),
        system="Be brief.",
        max_tokens=500,
        tool_choice="none",
    )
    params = build_params(request, MINI)
    assert params["instructions"] == "Be brief." and params["max_output_tokens"] == 500
    assert params["tool_choice"] == "none" and "truncation" not in params
    assert params["store"] is False
    assert (
        build_params(Request(events=request.events), MINI)
        .keys()
        .isdisjoint({"tools", "tool_choice", "instructions", "max_output_tokens"})
    )
    summaryless = build_params(request, MINI, summaries=False)
    assert summaryless["reasoning"] == {"effort": "medium"}
    cont = Request(events=request.events, continuation=Continuation("partial"))
    assert build_params(cont, MINI)["input"][-1]["role"] == "user"


def test_openai_prices_and_windows() -> None:
    info = model_info("gpt-5-mini-2025-08-07")
    assert (info.context_window, info.input_price) == (400_000, 0.25)
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_read_input_tokens=1_000_000
    )
    assert info.cost(usage) == pytest.approx(0.25 + 2.0 + 0.025)
    assert info.cost(Usage(cache_creation_input_tokens=1_000_000)) == pytest.approx(0.25)
    assert model_info("gpt-4.1").context_window == 1_047_576
    unknown = model_info("gpt-5.6-sol")
    assert unknown.context_window is None and unknown.cost(usage) is None
    assert model_info("o3-pro").cost(usage) is None  # not priced as o3
    claude = model_info("claude-haiku-4-5")  # unchanged: 1.25x writes, 0.1x reads
    assert claude.cost(Usage(0, 0, 1_000_000, 1_000_000)) == pytest.approx(0.1 + 1.25)


async def test_a_summarize_request_is_refused_and_the_turn_goes_on(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    _serve(server, _HELLO, _HELLO)
    chat = _chat(server, clock)
    await chat.send("first")
    chat.compact_next = True
    turn = await chat.send("second")
    assert turn.outcome == "complete" and len(server.requests) == 2
    assert any("compaction" in e.text for e in turn if isinstance(e, Notice))


# ---------------------------------------------------------------- configuration


def test_missing_key_says_how_to_set_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProviderConfigError) as info:
        OpenAIResponsesProvider()
    message = str(info.value)
    assert "%chat key openai" in message and "OPENAI_API_KEY" in message and ".env" in message


async def test_environment_key_and_base_url_are_honoured(
    server: AnthropicTestServer, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    _serve(server, _HELLO)
    provider = OpenAIResponsesProvider()
    assert provider.model == DEFAULT_MODEL and "sk-proj" not in repr(provider)
    assert provider.endpoint == f"{server.url}/v1"
    await _chat(server, clock, provider=provider).send("hi")
    assert server.requests[0].headers["authorization"] == "Bearer sk-proj-from-env"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert provider.endpoint == DEFAULT_BASE_URL


def test_classify_stream_and_transport_errors() -> None:
    import httpx2
    import openai

    from jupyter_turns.providers.openai_errors import classify

    request = httpx2.Request("POST", "https://api.openai.com/v1/responses")
    in_stream = openai.APIError(
        "Rate limit reached", request, body={"code": "rate_limit_exceeded", "message": "slow"}
    )
    assert (classify(in_stream).kind, classify(in_stream).retryable) == ("rate_limit", True)
    too_long = openai.APIError("too long", request, body={"code": "context_length_exceeded"})
    assert (classify(too_long).kind, classify(too_long).retryable) == ("context_too_long", False)
    timeout = classify(openai.APITimeoutError(request))
    assert (timeout.kind, timeout.retryable) == ("timeout", True)
    broken = classify(httpx2.RemoteProtocolError("peer closed connection"))
    assert (broken.kind, broken.retryable) == ("connection", True)


def _finish(body: str) -> Finished:
    from jupyter_turns.providers.openai_stream import ResponsesAdapter

    adapter = ResponsesAdapter()
    items = [item for event in _events(body.encode()) for item in adapter.feed(event)]
    assert isinstance(items[-1], Finished)
    return items[-1]


def test_stop_reasons_and_their_details() -> None:
    refused = _finish(responses_body([Text(["No."], refusal=True)]))
    assert refused.reason == "refusal" and refused.details["refusal"] == "No."
    filtered = _finish(
        responses_body([Text(["Part"])], status="incomplete", incomplete="content_filter")
    )
    assert filtered.reason == "refusal"
    assert filtered.details["incomplete_details"] == {"reason": "content_filter"}
    called = _finish(responses_body([Text(["Let me look."]), Call("run_me", ["{}"])]))
    assert called.reason == "tool_use"
    cut = _finish(
        responses_body([Text(["x"])], status="incomplete", incomplete="max_output_tokens")
    )
    assert cut.reason == "max_tokens"


async def test_a_summary_refusal_is_answered_by_asking_without_summaries(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    from tests.support.openai_sse import openai_error

    refusal = "Your organization must be verified to generate reasoning summaries."
    server.enqueue(openai_error(400, refusal, code="unsupported_value"))
    _serve(server, _HELLO, _HELLO)
    provider = _provider(server)
    chat = _chat(server, clock, provider=provider, thinking=4000)
    turn = await chat.send("hi")
    assert turn.outcome == "complete" and clock.sleeps == []
    sent = [r.body["reasoning"] for r in server.requests]
    assert sent[0] == {"effort": "low", "summary": "auto"} and sent[1] == {"effort": "low"}
    await chat.send("again")  # the thread remembers
    assert server.requests[2].body["reasoning"] == {"effort": "low"} and not provider.summaries
    server.assert_all_served()
