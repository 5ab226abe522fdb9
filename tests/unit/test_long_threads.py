"""Long threads through the real SDK against the local API server: the context gauge from usage,
compaction near the threshold and on request (blocks sent back verbatim, also after the
thread is saved and read back), where compaction is not offered, forget, budgets with the
API's token counter, and requests too large to send."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_turns import Chat, PolicyPrompter, RecordingSink
from jupyter_turns.engine.window import gauge, to_send
from jupyter_turns.model.budget import BudgetAnswer, BudgetPrompt
from jupyter_turns.model.content import ImageData
from jupyter_turns.model.conversation import Conversation
from jupyter_turns.model.events import (
    Block,
    ChatRequest,
    ErrorEvent,
    Message,
    Notice,
    ToolCallRequest,
    ToolCallResponse,
)
from jupyter_turns.model.sink import UsageUpdate
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer, RecordedRequest
from tests.support.anthropic_sse import Compaction, Text, ToolUse, sse_message, sse_text_response

from .conftest import FakeClock

HAIKU = "claude-haiku-4-5"
SONNET = "claude-sonnet-5-5"  # $3 / $15 per million tokens
SUMMARY = 'Sümmary — the user asked about "rain" in Oslo ✓; tool `lookup` gave 12 mm.\n'
TOOL_CHANGES = [{"type": "tool_removal", "name": "old_tool"}]
STREAMED_BLOCK = {
    "type": "compaction",
    "content": SUMMARY,
    "signature": "EqQBCkYIBxgCKkDcompactsig",
    "tool_changes": TOOL_CHANGES,
    "encrypted_content": "Eo8CCkYIBxgCKkDencrypted",
}


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _chat(server: AnthropicTestServer, clock: FakeClock, model: str = HAIKU, **kw: Any) -> Chat:
    provider = AnthropicProvider(model, api_key="test-key", base_url=server.url)
    kw.setdefault("thinking", "off")
    return Chat(provider=provider, sleep=clock.sleep, clock=clock, rand=lambda: 0.5, **kw)


def _answer(text: str = "ok", /, **usage: int) -> Reply:
    input_tokens = usage.pop("input_tokens", 12)
    output = usage.pop("output_tokens", 5)
    body = sse_message(
        [Text([text])], input_tokens=input_tokens, output_tokens=output, usage_extra=usage
    )
    return Reply.sse(body)


def _body(request: RecordedRequest) -> dict[str, Any]:
    assert isinstance(request.body, dict)
    return request.body


# ---------------------------------------------------------------------------- the gauge


async def test_the_gauge_is_the_last_responses_usage_against_the_models_window(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    sink = RecordingSink()
    chat = _chat(server, clock, sink=sink)
    cached = {"cache_read_input_tokens": 10_000, "cache_creation_input_tokens": 1_000}
    server.enqueue(_answer(input_tokens=30_000, output_tokens=500, **cached))
    await chat.send("hello")
    assert chat.context_tokens == 41_500
    last = [u for u in sink.updates if isinstance(u, UsageUpdate)][-1]
    assert (last.context_tokens, last.context_window) == (41_500, 200_000)
    assert gauge(chat.context_tokens, chat.context_window) == "42k / 200k"
    # the next turn opens with the gauge as the thread left it
    server.enqueue(_answer(input_tokens=100, output_tokens=10))
    start = len(sink.updates)
    await chat.send("again")
    first = next(u for u in sink.updates[start:] if isinstance(u, UsageUpdate))
    assert first.context_tokens == 41_500 and first.cost_usd is None
    assert chat.context_tokens == 110
    unknown = _chat(server, clock, model="my-proxy-model")
    server.enqueue(_answer(input_tokens=900, output_tokens=50))
    await unknown.send("hi")
    assert gauge(unknown.context_tokens, unknown.context_window) == (
        "950 / window unknown for this model"
    )
    server.assert_all_served()


# ---------------------------------------------------------------------------- compaction


async def test_near_the_threshold_the_edit_goes_along_and_the_block_comes_back_verbatim(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    chat = _chat(server, clock, compact_at=2_000)  # tokens
    server.enqueue(_answer("first", input_tokens=1_000, output_tokens=50))
    await chat.send("one")  # nothing measured before it: no edit
    assert "context_management" not in _body(server.requests[0])
    server.enqueue(_answer("second", input_tokens=1_500, output_tokens=100))
    await chat.send("two")
    sent = server.requests[1]
    edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 2_000}}
    assert _body(sent)["context_management"] == {"edits": [edit]}
    assert "compact-2026-01-12" in sent.headers["anthropic-beta"]
    # the server compacts inline: the response opens with the compaction block
    iterations = [
        {"type": "compaction", "input_tokens": 2_100, "output_tokens": 80},
        {"type": "message", "input_tokens": 300, "output_tokens": 20},
    ]
    block = Compaction(SUMMARY, tool_changes=TOOL_CHANGES)
    body = sse_message(
        [block, Text(["Three."])],
        input_tokens=300,
        output_tokens=20,
        usage_extra={"iterations": iterations},
    )
    server.enqueue(Reply.sse(body))
    turn = await chat.send("three")
    (compacted,) = [e for e in turn if isinstance(e, Block)]
    assert compacted.metadata["raw_block"] == STREAMED_BLOCK
    assert compacted.metadata["compaction"]["mode"] == "edit"
    assert compacted.metadata["compaction"]["tokens_before"] == 1_600
    notice = next(e for e in turn if isinstance(e, Notice))
    assert notice.text.startswith(
        "Earlier conversation summarized (the context reached the threshold): 1,600 tokens"
    )
    assert turn.usage.input_tokens == 2_400  # the compaction's own tokens are billed too
    assert chat.context_tokens == 320  # the gauge: what is in use after it
    # from now on the block is sent first, in place of what it summarizes, exactly as it came
    server.enqueue(_answer("four"))
    await chat.send("four")
    messages = _body(server.requests[3])["messages"]
    assert messages[0] == {
        "role": "assistant",
        "content": [STREAMED_BLOCK, {"type": "text", "text": "Three."}],
    }
    assert messages[1]["content"][0]["text"] == "four"
    assert len(messages) == 2
    # saved and read back (a restarted kernel restores the thread from its record)
    record = json.loads(json.dumps(chat.conversation.to_record()))
    restored = _chat(server, clock, conversation=Conversation.from_record(record))
    server.enqueue(_answer("five"))
    await restored.send("five")
    again = _body(server.requests[4])["messages"]
    assert again[0]["content"][0] == STREAMED_BLOCK
    sent_back = json.dumps(again[0]["content"][0], sort_keys=True)
    assert sent_back == json.dumps(STREAMED_BLOCK, sort_keys=True)  # the same JSON, byte for byte
    server.assert_all_served()


async def test_compact_summarizes_the_earlier_conversation_before_the_next_request(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    chat = _chat(server, clock)
    server.enqueue(_answer("Oslo gets 12 mm.", input_tokens=5_000, output_tokens=40))
    await chat.send("How much rain in Oslo?")
    chat.compact()
    summarized = sse_message([Compaction(SUMMARY)], stop_reason="compaction", output_tokens=30)
    server.enqueue(Reply.sse(summarized), _answer("Bergen gets more."))
    turn = await chat.send("And Bergen?")
    first, second = (_body(r) for r in server.requests[1:])
    assert first["compaction"] == {"type": "summarize"}
    assert "context_management" not in first
    assert "compact-2026-09-04" in server.requests[1].headers["anthropic-beta"]
    assert [m["role"] for m in first["messages"]] == ["user", "assistant"]  # not the new request
    block = {**STREAMED_BLOCK, "tool_changes": []}
    assert second["messages"] == [
        {"role": "assistant", "content": [block]},
        {"role": "user", "content": [{"type": "text", "text": "And Bergen?", **_cached()}]},
    ]
    assert turn.outcome == "complete" and turn.text == "Bergen gets more."
    notice = next(e for e in turn if isinstance(e, Notice))
    assert notice.text.startswith("Earlier conversation summarized (%chat compact): 5,040 tokens")
    assert not chat.compact_next
    server.assert_all_served()


def _cached() -> dict[str, Any]:
    return {"cache_control": {"type": "ephemeral"}}


async def test_where_compaction_is_not_offered_the_error_is_clear_and_the_thread_goes_on(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    chat = _chat(server, clock, compact_at=2_000)
    server.enqueue(_answer("first", input_tokens=1_500, output_tokens=10))
    await chat.send("one")
    refused = Reply.error(400, "context_management: Extra inputs are not permitted")
    server.enqueue(refused, _answer("second"))
    turn = await chat.send("two")
    assert "context_management" in _body(server.requests[1])
    assert "context_management" not in _body(server.requests[2])
    assert "anthropic-beta" not in server.requests[2].headers
    notice = next(e for e in turn if isinstance(e, Notice))
    assert notice.level == "warning" and notice.text.startswith("Compaction is not available here")
    assert "Extra inputs are not permitted" in notice.text and turn.text == "second"
    chat.compact()  # refused too: said so, and the turn answers its request
    server.enqueue(Reply.error(400, "compaction: not supported for this model"), _answer("3"))
    turn = await chat.send("three")
    assert [n.text[:32] for n in turn if isinstance(n, Notice)] == [
        "Compaction is not available here"
    ]
    assert turn.outcome == "complete" and turn.text == "3"
    assert not any(isinstance(e, ErrorEvent) for e in turn)
    server.assert_all_served()


async def test_forget_stops_sending_the_oldest_exchanges_and_keeps_them() -> None:
    provider = ScriptedProvider([cycle(message(f"answer {n}")) for n in range(5)])
    chat = Chat(provider=provider)
    for n in range(3):
        await chat.send(f"request {n}")
    with pytest.raises(ValueError, match="forget 1 to 3"):
        chat.forget(4)
    chat.forget(2)
    await chat.send("request 3")
    sent = provider.requests[-1].events
    assert [getattr(e, "content", "") for e in sent if e.kind != "notice"] == [
        "request 2",
        "answer 2",
        "request 3",
    ]
    assert len([e for e in chat.conversation.events if e.kind == "chat_request"]) == 4
    record = json.loads(json.dumps(chat.conversation.to_record()))
    restored = Conversation.from_record(record)
    assert [e.id for e in to_send(restored.events)] == [
        e.id for e in to_send(chat.conversation.events)
    ]
    chat.forget(1)  # counts what is sent now
    await chat.send("request 4")
    assert [e.content for e in provider.requests[-1].events if isinstance(e, ChatRequest)] == [
        "request 3",
        "request 4",
    ]


# ---------------------------------------------------------------------------- budgets


async def test_the_budget_pause_estimates_the_next_call_with_the_apis_token_count(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    server.count_tokens = True
    asked: list[BudgetPrompt] = []

    def stop(prompt: BudgetPrompt) -> BudgetAnswer:
        asked.append(prompt)
        return BudgetAnswer("stop")

    prompter = PolicyPrompter("allow", budget=stop)
    chat = _chat(server, clock, model=SONNET, budget_usd=0.35, prompter=prompter)
    chat.tools = {}
    call = sse_message(
        [ToolUse("lookup", {"q": "x"})], stop_reason="tool_use", input_tokens=100_000,
        output_tokens=2_000, model=SONNET,
    )  # fmt: skip
    server.enqueue(Reply.sse(call))
    turn = await chat.send("go")
    (prompt,) = asked
    assert prompt.estimated_by == "token count" and prompt.scope == "turn"
    count = server.requests[-1]
    assert count.path == "/v1/messages/count_tokens"
    assert [m["role"] for m in _body(count)["messages"]] == ["user", "assistant", "user"]
    assert prompt.text == "Spent $0.33 of $0.35 (this turn's budget); next call ≈ $0.03 — " \
        "estimates from list prices."  # fmt: skip
    assert turn.outcome == "stopped"
    stopped = [e for e in turn if isinstance(e, Notice)][-1]
    assert stopped.text.startswith("Stopped: Spent $0.33 of $0.35")
    server.assert_all_served()


async def test_without_a_token_counter_the_last_call_is_the_estimate(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    asked: list[BudgetPrompt] = []

    def go_on(prompt: BudgetPrompt) -> BudgetAnswer:
        asked.append(prompt)
        return BudgetAnswer("continue")

    chat = _chat(server, clock, model=SONNET, budget_usd=0.35)
    chat.prompter = PolicyPrompter("allow", budget=go_on)
    call = sse_message([ToolUse("lookup", {"q": "x"})], stop_reason="tool_use",
                       input_tokens=100_000, output_tokens=2_000, model=SONNET)  # fmt: skip
    refused = dataclasses.replace(Reply.error(404, "Not Found"), expect=None)
    # asked before the first request already; refused, it is not asked again
    server.enqueue(refused, Reply.sse(call), Reply.sse(sse_text_response(["done"])))
    turn = await chat.send("go")
    assert [p.estimated_by for p in asked] == ["last call"]
    assert asked[0].next_cost == pytest.approx(0.33)
    assert turn.outcome == "complete" and turn.text == "done"
    paths = [r.path for r in server.requests]
    assert paths == ["/v1/messages/count_tokens", "/v1/messages", "/v1/messages"]
    server.assert_all_served()


# ---------------------------------------------------------------------------- too large


def _thread_with(responses: list[ToolCallResponse]) -> Conversation:
    events: list[Any] = [ChatRequest(content="start")]
    for response in responses:
        events.append(ToolCallRequest(call_id=response.call_id, name="dump", arguments={}))
    events.extend(responses)
    events.append(Message(content="done"))
    return Conversation(events)


async def test_a_request_too_large_is_refused_before_sending_naming_what(
    server: AnthropicTestServer, clock: FakeClock
) -> None:
    huge = [ToolCallResponse(call_id=f"c{n}", content="x" * 12_000_000) for n in range(3)]
    chat = _chat(server, clock, conversation=_thread_with(huge))
    turn = await chat.send("next")
    (error,) = [e for e in turn if isinstance(e, ErrorEvent)]
    assert error.error_type == "too_large" and turn.outcome == "error"
    assert "over the API's 32 MB limit" in error.message
    assert "the result of tool call `dump` (c0): 12.0 MB" in error.message
    assert "Nothing was sent" in error.message
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"  # base64 enough
    image = ImageData(media_type="image/png", data=pixel)
    many = [
        ToolCallResponse(call_id=f"i{n}", content="plot", images=[image] * 5) for n in range(21)
    ]
    chat = _chat(server, clock, conversation=_thread_with(many))
    turn = await chat.send("next")
    (error,) = [e for e in turn if isinstance(e, ErrorEvent)]
    assert "the request holds 105 images, over the API's 100 per request" in error.message
    assert server.requests == []  # nothing went over the wire
