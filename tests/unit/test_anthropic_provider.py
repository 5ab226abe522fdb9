"""AnthropicProvider through the real SDK against the local API server (recorded and faulty)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.errors import ProviderConfigError
from jupyter_turns.model.events import (
    Block,
    ErrorEvent,
    Message,
    Notice,
    Reasoning,
    ToolCallResponse,
)
from jupyter_turns.model.interrupt import InterruptAction, InterruptChoice
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.providers.base import Continuation, Request
from tests.support.anthropic_replies import Reply, load_recording, recording_path
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import (
    Text,
    ToolUse,
    sse_event,
    sse_message,
    sse_text_response,
    sse_thinking_response,
)

from .conftest import FakeClock
from .helpers import until

HAIKU = "claude-haiku-4-5"


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _provider(server: AnthropicTestServer, model: str = HAIKU) -> AnthropicProvider:
    return AnthropicProvider(model, api_key="test-key", base_url=server.url)


def _chat(server: AnthropicTestServer, clock: FakeClock, **kw: Any) -> Chat:
    kw.setdefault("provider", _provider(server, kw.pop("model", HAIKU)))
    kw.setdefault("thinking", "off")
    return Chat(sleep=clock.sleep, clock=clock, rand=lambda: 0.5, **kw)


def _data(body: bytes) -> list[dict[str, Any]]:
    """The JSON of every SSE data line, parsed independently of the SDK."""
    out = []
    for line in body.decode().splitlines():
        if line.startswith("data: "):
            out.append(json.loads(line[len("data: ") :]))
    return out


def _deltas(body: bytes, kind: str, field: str) -> str:
    return "".join(
        d["delta"][field]
        for d in _data(body)
        if d["type"] == "content_block_delta" and d["delta"]["type"] == kind
    )


_KEEP = {
    "text": ("text",),
    "thinking": ("thinking", "signature"),
    "redacted_thinking": ("data",),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id", "content", "is_error"),
}


def _content(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages reduced to what they say (no cache settings or incidental fields)."""
    out = []
    for message in messages:
        blocks = []
        for block in message["content"]:
            kind = block["type"]
            fields = {
                name: block.get(name, False if name == "is_error" else None) for name in _KEEP[kind]
            }
            blocks.append({"type": kind, **fields})
        out.append({"role": message["role"], "content": blocks})
    return out


def _run_me(result: str) -> Any:
    @tool(run="unattended")
    def run_me(bar: str | list[str], foo: str = "foo") -> str:
        """A test tool."""
        return result

    return run_me


# ---------------------------------------------------------------- recorded exchanges


async def test_chat_completion_recording_replays_into_reasoning_and_message(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    [exchange] = load_recording(recording_path("test_chat_completion_stream.yml"))
    server.enqueue_recording([exchange])
    chat = _chat(server, clock, thinking=12800)
    turn = await chat.send("Test message")
    assert turn.kinds == ["chat_request", "reasoning", "message"]
    reasoning, message = turn.events[1], turn.events[2]
    assert isinstance(reasoning, Reasoning) and isinstance(message, Message)
    assert reasoning.content == _deltas(exchange.body, "thinking_delta", "thinking")
    assert reasoning.metadata["signature"] == _deltas(exchange.body, "signature_delta", "signature")
    assert message.content == _deltas(exchange.body, "text_delta", "text")
    sent = server.requests[0].body
    assert _content(sent["messages"]) == _content(exchange.request_body["messages"])
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 12800, "display": "summarized"}
    assert turn.usage.input_tokens == 38 and turn.usage.output_tokens > 3
    assert turn.cost_usd == pytest.approx(
        (turn.usage.input_tokens * 1 + turn.usage.output_tokens * 5) / 1e6
    )
    server.assert_all_served()


@pytest.mark.parametrize(
    ("name", "reasoning"),
    [("test_tool_call_reasoning.yml", 12800), ("test_tool_call_stream.yml", "off")],
)
async def test_tool_recordings_send_the_blocks_back_unchanged(
    server: AnthropicTestServer, clock: FakeClock, name: str, reasoning: Any
) -> None:
    exchanges = load_recording(recording_path(name))
    server.enqueue_recording(exchanges)
    chat = _chat(server, clock, thinking=reasoning, tools=[_run_me("working!")])
    turn = await chat.send("Please run the tool, providing whatever arguments you want.")
    assert "tool_call_request" in turn.kinds and turn.kinds[-1] == "message"
    assert len(server.requests) == 2
    assert _content(server.requests[1].body["messages"]) == _content(
        exchanges[1].request_body["messages"]
    )
    server.assert_all_served()


async def test_multi_turn_recording_sends_the_growing_conversation(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    exchanges = load_recording(recording_path("test_multi_turn_conversation.yml"))
    assert len(exchanges) == 5
    server.enqueue_recording(exchanges)
    chat = _chat(server, clock, tools=[_run_me("The secret code is: 42")])
    chat_turns = [await chat.send("Test message")]
    chat.config = replace(chat.config, thinking=12800)
    chat_turns.append(await chat.send("Repeat my previous message"))
    chat.config = replace(chat.config, thinking="off")
    chat_turns.append(
        await chat.send("Please run the tool, providing whatever arguments you want.")
    )
    chat.config = replace(chat.config, thinking=12800)
    chat_turns.append(await chat.send("What was the result of the previous tool call?"))
    tool_turn = chat_turns[2]
    assert len(tool_turn.cycle_usage) == 2  # the tool call, then the answer to its result
    recorded = [
        next(d["usage"] for d in _data(e.body) if d["type"] == "message_delta")["output_tokens"]
        for e in exchanges[2:4]
    ]
    assert [usage.output_tokens for usage, _ in tool_turn.cycle_usage] == recorded
    assert tool_turn.usage.output_tokens == sum(recorded)
    assert tool_turn.cost_usd == pytest.approx(sum(cost for _, cost in tool_turn.cycle_usage))
    for number in range(1, 5):
        ours = _content(server.requests[number].body["messages"])
        assert ours == _content(exchanges[number].request_body["messages"]), number
    server.assert_all_served()


# ---------------------------------------------------------------- faults

_HELLO = sse_text_response(["Hello", " there", ", wörld 🙂"])


@pytest.mark.parametrize(
    ("fault", "waits"),
    [
        (Reply.error(429, retry_after=2), [2.0]),
        (Reply.error(429, retry_after_ms=1500), [1.5]),
        (Reply.error(429), [1.0]),
        (Reply.error(529), [1.0]),
        (Reply.error(500), [1.0]),
        (Reply.error(503), [1.0]),
        (Reply.drop(), [1.0]),
        (Reply.drop(reset=True), [1.0]),
        (Reply.reset_after(_HELLO, 1), [1.0]),  # after message_start: nothing shown yet
        (Reply.truncated(_HELLO, 2), [1.0]),
        (Reply.error_event_after(_HELLO, 2), [1.0]),
    ],
    ids=[
        "429-retry-after",
        "429-retry-after-ms",
        "429-bare",
        "529",
        "500",
        "503",
        "drop",
        "drop-rst",
        "reset-before-text",
        "truncated-before-text",
        "error-event-before-text",
    ],
)
async def test_transient_faults_before_any_text_are_retried_transparently(
    server: AnthropicTestServer, clock: FakeClock, fault: Reply, waits: list[float]
) -> None:
    server.enqueue(fault, Reply.sse(_HELLO))
    turn = await _chat(server, clock).send("hi")
    assert clock.sleeps == waits
    assert turn.outcome == "complete" and turn.kinds == ["chat_request", "message"]
    assert turn.text == "Hello there, wörld 🙂"
    server.assert_all_served()


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, "auth", ["authentication_error", "ANTHROPIC_API_KEY"]),
        (403, "permission", ["permission_error"]),
        (400, "bad_request", ["invalid_request_error", "the server says no"]),
        (404, "not_found", ["not_found_error", "model name"]),
        (413, "too_large", ["request_too_large", "new thread"]),
    ],
)
async def test_fatal_errors_are_shown_at_once_and_keep_the_thread_valid(
    server: AnthropicTestServer, clock: FakeClock, status: int, kind: str, words: list[str]
) -> None:
    server.enqueue(Reply.sse(_HELLO), Reply.error(status, "the server says no"))
    chat = _chat(server, clock)
    await chat.send("first")
    turn = await chat.send("second")
    assert clock.sleeps == [] and len(server.requests) == 2
    assert turn.outcome == "error"
    error = turn.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == kind
    assert all(word in error.message for word in words)
    assert "the server says no" in error.message
    assert [e.kind for e in chat.conversation.events][:2] == ["chat_request", "message"]
    chat.conversation.check_sendable()


@pytest.mark.parametrize(
    "fault",
    [
        Reply.reset_after(_HELLO, 5),
        Reply.close_after(_HELLO, 5),
        Reply.truncated(_HELLO, 5),
        Reply.error_event_after(_HELLO, 5),
    ],
    ids=["reset", "fin", "no-message-stop", "error-event"],
)
async def test_a_failure_after_text_was_shown_keeps_it_and_is_not_retried(
    server: AnthropicTestServer, clock: FakeClock, fault: Reply
) -> None:
    server.enqueue(fault)
    sink_text: list[str] = []
    turn = await _chat(server, clock).send("hi")
    sink_text = [e.content for e in turn if isinstance(e, Message)]
    assert clock.sleeps == [] and len(server.requests) == 1
    assert sink_text == ["Hello there"]  # both deltas before the failure
    assert any(isinstance(e, ErrorEvent) for e in turn)
    assert turn.outcome == "stopped"
    server.assert_all_served()


async def test_continue_after_a_dead_stream_prefills_where_the_model_allows(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(Reply.reset_after(sse_text_response(["The quick", " brown"]), 4))
    server.enqueue(Reply.sse(sse_text_response([" brown fox."])))
    prompter = PolicyPrompter(interrupt=lambda ctx: InterruptChoice(InterruptAction.CONTINUE))
    turn = await _chat(server, clock, prompter=prompter).send("go")
    assert [e.content for e in turn if isinstance(e, Message)] == ["The quick brown fox."]
    last = server.requests[1].body["messages"][-1]
    assert last == {"role": "assistant", "content": [{"type": "text", "text": "The quick"}]}


async def test_continue_on_a_new_model_asks_with_a_quoting_user_message(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(Reply.reset_after(sse_text_response(["The quick", " brown"]), 4))
    server.enqueue(Reply.sse(sse_text_response([" brown fox."])))
    prompter = PolicyPrompter(interrupt=lambda ctx: InterruptChoice(InterruptAction.CONTINUE))
    chat = _chat(server, clock, prompter=prompter, model="claude-opus-4-6")
    turn = await chat.send("go")
    assert turn.text == "The quick brown fox."
    sent = server.requests[1].body["messages"]
    assert sent[-2] == {"role": "assistant", "content": [{"type": "text", "text": "The quick"}]}
    assert sent[-1]["role"] == "user"
    assert "<answer_end>The quick</answer_end>" in sent[-1]["content"][0]["text"]


async def test_a_400_about_prefill_falls_back_to_the_user_message_form(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(
        Reply.reset_after(sse_text_response(["The quick", " brown"]), 4),
        Reply.error(400, "This model does not support assistant message prefill."),
        Reply.sse(sse_text_response([" brown fox."])),
    )
    prompter = PolicyPrompter(interrupt=lambda ctx: InterruptChoice(InterruptAction.CONTINUE))
    turn = await _chat(server, clock, prompter=prompter).send("go")
    assert turn.text == "The quick brown fox."
    assert server.requests[1].body["messages"][-1]["role"] == "assistant"
    assert server.requests[2].body["messages"][-1]["role"] == "user"
    server.assert_all_served()


async def test_stop_during_a_slow_stream_keeps_what_arrived(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    release = threading.Event()
    server.enqueue(
        Reply.hang_after(sse_text_response(["Partial", " answer", " never"]), 5, release)
    )
    chat = _chat(server, clock)
    task = asyncio.create_task(chat.send("go"))

    def arrived() -> str:
        drafts = chat.turn.cycle.builder.drafts() if chat.turn is not None else []
        return "".join(d.text for d in drafts)

    await until(lambda: arrived() == "Partial answer", spins=10**7)  # then the server hangs
    chat.interrupt(InterruptAction.STOP)
    turn = await asyncio.wait_for(task, 10)
    release.set()
    assert [e.content for e in turn if isinstance(e, Message)] == ["Partial answer"]
    assert turn.outcome == "stopped"


async def test_chunks_split_mid_line_and_mid_character_parse_exactly(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(Reply.split(_HELLO))
    turn = await _chat(server, clock).send("hi")
    assert turn.text == "Hello there, wörld 🙂"


# ---------------------------------------------------------------- stop reasons and odd content


async def test_unknown_events_and_blocks_neither_crash_nor_get_lost(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    mystery = {"type": "mystery_block", "payload": {"x": 1}}
    body = "".join(
        [
            sse_message([Text(["Hi"])]).split("event: message_delta")[0],
            sse_event({"type": "content_block_start", "index": 1, "content_block": mystery}),
            sse_event({"type": "content_block_stop", "index": 1}),
            sse_event({"type": "telemetry", "data": {"y": 2}}),
            sse_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 3},
                }
            ),
            sse_event({"type": "message_stop"}),
        ]
    )
    server.enqueue(Reply.sse(body), Reply.sse(_HELLO))
    chat = _chat(server, clock)
    turn = await chat.send("hi")
    blocks = [e for e in turn if isinstance(e, Block)]
    assert [b.metadata["raw_block"] for b in blocks] == [mystery]
    notices = [e for e in turn if isinstance(e, Notice)]
    assert notices and notices[0].data == [{"type": "telemetry", "data": {"y": 2}}]
    await chat.send("next")
    assistant = server.requests[1].body["messages"][1]["content"]
    assert assistant[-1] == mystery  # sent back as received


async def test_tool_call_cut_off_by_max_tokens_gets_an_error_response(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    start = sse_message([ToolUse("run_me", {"bar": "foo"}, id="toolu_cut", pieces=1)]).split(
        "event: content_block_delta"
    )[0]
    body = "".join(
        [
            start,
            sse_event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": '{"bar": "fo'},
                }
            ),
            sse_event({"type": "content_block_stop", "index": 0}),
            sse_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "max_tokens"},
                    "usage": {"output_tokens": 9},
                }
            ),
            sse_event({"type": "message_stop"}),
        ]
    )
    server.enqueue(Reply.sse(body), Reply.sse(_HELLO))
    turn = await _chat(server, clock, tools=[_run_me("never")]).send("go")
    [response] = [e for e in turn if isinstance(e, ToolCallResponse)]
    assert response.is_error and "Could not parse" in response.content
    result = server.requests[1].body["messages"][-1]["content"][0]
    assert (result["tool_use_id"], result["is_error"]) == ("toolu_cut", True)


async def test_max_tokens_answer_is_kept_and_continue_is_offered(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(Reply.sse(sse_text_response(["Long answer"], stop_reason="max_tokens")))
    offered: list[Any] = []

    def menu(context: Any) -> InterruptChoice:
        offered.append(context)
        return InterruptChoice(InterruptAction.STOP)

    turn = await _chat(server, clock, prompter=PolicyPrompter(interrupt=menu)).send("go")
    assert turn.text == "Long answer" and "max_tokens" in offered[0].reason


async def test_pause_turn_is_continued_automatically(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(
        Reply.sse(sse_text_response(["Searching"], stop_reason="pause_turn")),
        Reply.sse(sse_text_response(["Done."])),
    )
    turn = await _chat(server, clock).send("go")
    assert turn.kinds == ["chat_request", "message", "message"]
    assert server.requests[1].body["messages"][-1]["role"] == "assistant"


async def test_refusal_is_shown_with_its_details(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    body = sse_text_response(["I can't"], stop_reason="refusal").replace(
        '"stop_reason":"refusal"',
        '"stop_reason":"refusal","stop_details":{"type":"refusal","explanation":"unsafe request"}',
    )
    server.enqueue(Reply.sse(body))
    turn = await _chat(server, clock).send("go")
    notice = turn.events[-1]
    assert isinstance(notice, Notice) and "unsafe request" in notice.text


async def test_context_window_exceeded_gives_a_clear_error(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.enqueue(Reply.sse(sse_text_response(["x"], stop_reason="model_context_window_exceeded")))
    turn = await _chat(server, clock).send("go")
    assert turn.outcome == "error" and "context window" in turn.events[-1].message  # type: ignore[union-attr]


async def test_thinking_and_signature_round_trip_through_a_tool_cycle(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    signature = "EqQBCkYIBxgCKkD+/sig=="
    first = sse_thinking_response(
        ["Plan: ", "call it."],
        signature=signature,
        tool=ToolUse("run_me", {"bar": "foo"}, id="toolu_9"),
    )
    server.enqueue(Reply.sse(first), Reply.sse(_HELLO))
    await _chat(server, clock, thinking=4000, tools=[_run_me("ok")]).send("go")
    assistant = server.requests[1].body["messages"][1]["content"]
    assert assistant[0] == {
        "type": "thinking",
        "thinking": "Plan: call it.",
        "signature": signature,
    }
    assert assistant[1]["type"] == "tool_use" and assistant[1]["input"] == {"bar": "foo"}


# ---------------------------------------------------------------- configuration


def test_missing_key_says_how_to_set_it_or_go_offline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env file to find either
    with pytest.raises(ProviderConfigError) as info:
        AnthropicProvider()
    assert "ANTHROPIC_API_KEY" in str(info.value) and "--provider scripted" in str(info.value)


async def test_environment_key_and_base_url_are_honoured(
    server: AnthropicTestServer, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.enqueue(Reply.sse(_HELLO))
    provider = AnthropicProvider(HAIKU)
    assert "sk-ant" not in repr(provider)
    await _chat(server, clock, provider=provider).send("hi")
    headers = server.requests[0].headers
    assert "sk-ant-from-env" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_request_caches_tools_system_and_the_newest_turn() -> None:
    from jupyter_turns.model.events import ChatRequest
    from jupyter_turns.providers.anthropic import build_params
    from jupyter_turns.providers.base import ToolSpec

    request = Request(
        events=(ChatRequest(content="hello"),),
        tools=(ToolSpec("a", "A", {"type": "object"}), ToolSpec("b", "B", {"type": "object"})),
        system="Be brief.",
        thinking="adaptive",
    )
    params = build_params(request, "claude-sonnet-4-5")
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in params["tools"][0]
    assert params["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert params["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert params["thinking"]["type"] == "enabled" and params["max_tokens"] == 64_000
    assert build_params(request, "claude-opus-4-6")["thinking"] == {
        "type": "adaptive",
        "display": "summarized",
    }
    assert "thinking" not in build_params(request, "claude-3-5-haiku-latest")
    cont = Request(
        events=request.events, continuation=Continuation("trailing space "), thinking="off"
    )
    assert build_params(cont, HAIKU)["messages"][-1]["role"] == "user"  # no prefill ending in space
