"""Non-streaming requests: a provider asked for plain responses (what ``--stream off`` and
``ChatMagics.stream`` set; the magic's side is in test_stream_setting.py) and the automatic
fallback when an endpoint or a proxy does not stream — the same events as a stream, through the
real SDK and the local server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_turns import Chat
from jupyter_turns.model.events import Flush, Notice, Part
from jupyter_turns.model.interrupt import InterruptAction
from jupyter_turns.providers.anthropic import NOT_STREAMING, AnthropicProvider
from jupyter_turns.providers.base import Request
from tests.support.anthropic_json import message_from_sse
from tests.support.anthropic_replies import (
    RECORDING_DIRS,
    Pause,
    Reply,
    load_recording,
    split_events,
)
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response

from .helpers import until

RECORDINGS = sorted({p.name for d in RECORDING_DIRS if d.is_dir() for p in d.glob("*.yml")})


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _provider(server: AnthropicTestServer) -> AnthropicProvider:
    return AnthropicProvider("claude-haiku-4-5", api_key="test-key", base_url=server.url)


async def _events(provider: AnthropicProvider, request: Request) -> list[Any]:
    """What the provider yields, with each block's text pieces joined (a stream splits text
    where the network did; a whole message comes in one piece)."""
    joined: list[Any] = []
    async for event in provider.stream(request):
        previous = joined[-1] if joined else None
        if (
            isinstance(event, Part)
            and isinstance(previous, Part)
            and previous.index == event.index
            and type(previous.content) is type(event.content)
            and hasattr(event.content, "text")
        ):
            text = previous.content.text + event.content.text  # type: ignore[union-attr]
            joined[-1] = Part(event.index, dataclasses.replace(event.content, text=text))
        else:
            joined.append(event)
    return joined


def _request(exchange: Any) -> Request:
    from jupyter_turns.model.events import ChatRequest

    return Request(events=(ChatRequest(content="hi"),), thinking="off")


@pytest.mark.parametrize("name", RECORDINGS)
async def test_every_recorded_stream_has_a_non_streaming_twin_with_the_same_events(
    server: AnthropicTestServer, name: str
) -> None:
    from tests.support.anthropic_replies import recording_path

    for exchange in load_recording(recording_path(name)):
        server.enqueue(exchange.reply())
        streamed = await _events(_provider(server), _request(exchange))
        server.enqueue(Reply.json(200, message_from_sse(exchange.body)))
        plain = _provider(server)
        plain.streaming = False
        whole = await _events(plain, _request(exchange))
        assert whole == streamed, name
        assert server.requests[-1].body["stream"] is False
    server.assert_all_served()


async def test_a_proxy_answering_json_to_a_stream_request_falls_back_once(
    server: AnthropicTestServer,
) -> None:
    body = sse_text_response(["Hello", " there."])
    answer = message_from_sse(body.encode() if isinstance(body, str) else body)
    server.enqueue(Reply.json(200, answer), Reply.json(200, answer), Reply.json(200, answer))
    provider = _provider(server)
    chat = Chat(provider, thinking="off")
    turn = await chat.send("hi")
    assert [e.kind for e in turn] == ["chat_request", "message", "notice"]
    assert turn.events[1].content == "Hello there." and turn.outcome == "complete"
    notice = turn.events[2]
    assert isinstance(notice, Notice) and notice.text == NOT_STREAMING
    assert [r.body["stream"] for r in server.requests] == [True, False]
    await chat.send("again")  # the thread remembers: one plain request, no notice
    assert [r.body["stream"] for r in server.requests] == [True, False, False]
    assert chat.conversation.events[-1].kind == "message"


def _answer(chunks: list[str]) -> dict[str, Any]:
    """The Message JSON a plain request gets for a text answer."""
    return message_from_sse(sse_text_response(chunks).encode())


async def test_the_fallback_notice_survives_a_plain_request_that_failed_and_was_retried(
    server: AnthropicTestServer, clock: Any
) -> None:
    answer = _answer(["Hello."])
    server.enqueue(Reply.json(200, answer), Reply.error(529, "Overloaded"), Reply.json(200, answer))
    chat = Chat(_provider(server), thinking="off", sleep=clock.sleep, clock=clock, rand=lambda: 0.5)
    turn = await chat.send("hi")
    assert [r.body["stream"] for r in server.requests] == [True, False, False]
    assert len(clock.sleeps) == 1  # the plain request was retried once
    assert [e.kind for e in turn] == ["chat_request", "message", "notice"]
    assert turn.events[2].text == NOT_STREAMING  # type: ignore[union-attr]
    server.enqueue(Reply.json(200, answer))
    await chat.send("again")  # said once: the next answer carries no notice
    assert [e.kind for e in chat.conversation.events[3:]] == ["chat_request", "message"]


async def test_a_proxy_answering_json_without_a_content_type_falls_back(
    server: AnthropicTestServer,
) -> None:
    answer = _answer(["Hello", " there."])
    untyped = Reply(200, (), (json.dumps(answer).encode(),), chunked=False)
    server.enqueue(untyped, Reply.json(200, answer))
    chat = Chat(_provider(server), thinking="off")
    turn = await chat.send("hi")
    assert [r.body["stream"] for r in server.requests] == [True, False]
    assert [e.kind for e in turn] == ["chat_request", "message", "notice"]
    assert turn.text == "Hello there." and turn.events[2].text == NOT_STREAMING  # type: ignore[union-attr]
    # a real stream without a content type is still read as one
    server.enqueue(Reply(200, (), tuple(split_events(sse_text_response(["Still", " here."])))))
    streaming = _provider(server)
    turn = await Chat(streaming, thinking="off").send("hi")
    assert turn.text == "Still here." and streaming.streaming is True
    assert [e.kind for e in turn] == ["chat_request", "message"]
    assert server.requests[-1].body["stream"] is True


async def test_an_endpoint_refusing_streaming_is_asked_again_without(
    server: AnthropicTestServer,
) -> None:
    body = sse_text_response(["Fine."])
    server.enqueue(
        Reply.error(400, "streaming is not supported on this endpoint"),
        Reply.json(200, message_from_sse(body.encode() if isinstance(body, str) else body)),
    )
    turn = await Chat(_provider(server), thinking="off").send("hi")
    assert [e.kind for e in turn] == ["chat_request", "message", "notice"]
    assert [r.body["stream"] for r in server.requests] == [True, False]


async def test_stop_during_a_non_streaming_request_cancels_it_and_shows_nothing(
    server: AnthropicTestServer,
) -> None:
    body = sse_text_response(["Never shown."])
    answer = message_from_sse(body.encode() if isinstance(body, str) else body)
    slow = Reply.json(200, answer)
    server.enqueue(Reply(slow.status, slow.headers, (Pause(30), *slow.steps), chunked=False))
    provider = _provider(server)
    provider.streaming = False
    chat = Chat(provider, thinking="off")
    task = asyncio.create_task(chat.send("go"))
    await until(lambda: len(server.requests) == 1, spins=10**7)
    chat.interrupt(InterruptAction.STOP)
    turn = await asyncio.wait_for(task, 10)
    assert turn.outcome == "stopped"
    assert not [e for e in turn if e.kind == "message"]


async def test_a_non_streaming_request_is_retried_like_a_stream(
    server: AnthropicTestServer, clock: Any
) -> None:
    body = sse_text_response(["After a retry."])
    server.enqueue(
        Reply.error(529, "Overloaded"),
        Reply.json(200, message_from_sse(body.encode() if isinstance(body, str) else body)),
    )
    provider = _provider(server)
    provider.streaming = False
    chat = Chat(provider, thinking="off", sleep=clock.sleep, clock=clock, rand=lambda: 0.5)
    turn = await chat.send("hi")
    assert turn.outcome == "complete" and turn.text == "After a retry."
    assert [r.body["stream"] for r in server.requests] == [False, False]


def _rich_stream() -> bytes:
    """A stream with every kind of block a plain response can hold: redacted reasoning, a server
    tool's call and result, and text with citations."""
    from tests.support.anthropic_sse import sse_event

    def block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[str]:
        opened = {"type": "content_block_start", "index": index, "content_block": start}
        moved = [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        closed = {"type": "content_block_stop", "index": index}
        return [sse_event(opened), *map(sse_event, moved), sse_event(closed)]

    citation = {
        "type": "web_search_result_location",
        "url": "https://example.org/rain",
        "title": "Rain",
        "encrypted_index": "Eo8B",
        "cited_text": "Pune gets 722 mm",
    }
    usage = {"input_tokens": 40, "output_tokens": 1, "server_tool_use": {"web_search_requests": 1}}
    events = [
        sse_event(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_rich",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-haiku-4-5",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            }
        ),
        *block(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}, []),
        *block(
            1,
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            [
                {"type": "input_json_delta", "partial_json": '{"query": "rain'},
                {"type": "input_json_delta", "partial_json": ' Pune"}'},
            ],
        ),
        *block(
            2,
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://example.org/rain",
                        "title": "Rain",
                        "encrypted_content": "EqgfCio",
                    }
                ],
            },
            [],
        ),
        *block(
            3,
            {"type": "text", "text": ""},
            [
                {"type": "citations_delta", "citation": citation},
                {"type": "text_delta", "text": "Pune gets about 722 mm."},
            ],
        ),
        sse_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 25},
            }
        ),
        sse_event({"type": "message_stop"}),
    ]
    return "".join(events).encode()


async def test_redacted_reasoning_server_tools_and_citations_come_out_the_same(
    server: AnthropicTestServer,
) -> None:
    body = _rich_stream()
    server.enqueue(Reply.sse(body))
    streamed = await _events(_provider(server), _request(None))
    server.enqueue(Reply.json(200, message_from_sse(body)))
    plain = _provider(server)
    plain.streaming = False
    whole = await _events(plain, _request(None))
    assert whole == streamed
    kinds = [e.metadata.get("raw_block", {}).get("type") for e in streamed if isinstance(e, Flush)]
    assert kinds[:3] == ["redacted_thinking", "server_tool_use", "web_search_tool_result"]
    assert next(e for e in streamed if isinstance(e, Flush) and e.index == 3).metadata["citations"]
