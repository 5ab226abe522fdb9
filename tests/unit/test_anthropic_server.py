"""The local Anthropic test server, driven by the real SDK (``anthropic.AsyncAnthropic``).

These tests pin both the server (replays are byte-exact, faults happen as scripted) and what the
SDK turns each fault into, which is what the provider code has to handle.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import RawMessageStreamEvent

from tests.support.anthropic_server import (
    AnthropicTestServer,
    Exchange,
    Reply,
    load_recording,
    recording_path,
    split_events,
)
from tests.support.anthropic_sse import (
    ToolUse,
    sse_text_response,
    sse_thinking_response,
    sse_tool_use_response,
)
from tests.support.fixtures import anthropic_client, anthropic_server

__all__ = ["anthropic_client", "anthropic_server"]  # fixtures used by name below

pytestmark = [
    pytest.mark.filterwarnings("error::ResourceWarning"),
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
]

RECORDINGS = {
    "test_chat_completion_stream.yml": 1,
    "test_multi_turn_conversation.yml": 5,
    "test_tool_call_reasoning.yml": 2,
    "test_tool_call_stream.yml": 2,
}
TEXT = ["Hel", "lo ", "wörld 🙂"]
BODY = sse_text_response(TEXT)
REQUEST: dict[str, Any] = {
    "model": "claude-haiku-4-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
}


@pytest.fixture(autouse=True, scope="module")
def earlier_garbage() -> None:
    """Collect what earlier files left behind before this file's strict checks begin: an SDK
    client another test never closed, collected during one of these tests, would fail it with
    its unclosed socket (seen once in the whole suite). This file's own leaks still fail."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture(autouse=True)
def no_thread_leak() -> Iterator[None]:
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("anthropic-test")]
    assert leaked == []


async def collect(
    client: anthropic.AsyncAnthropic, **overrides: Any
) -> list[RawMessageStreamEvent]:
    stream = await client.messages.create(**{**REQUEST, **overrides, "stream": True})
    return [event async for event in stream]


def sse_types(body: bytes) -> list[str]:
    """The event names of a raw SSE body, without pings (the SDK skips them)."""
    names = [p.split(b"\n", 1)[0].removeprefix(b"event: ").decode() for p in split_events(body)]
    return [n for n in names if n != "ping"]


def text_of(events: list[RawMessageStreamEvent]) -> str:
    return "".join(
        e.delta.text
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )


# ----------------------------------------------------------------------------- recordings


@pytest.mark.parametrize(("name", "count"), RECORDINGS.items())
def test_recording_documents_load(name: str, count: int) -> None:
    exchanges = load_recording(recording_path(name))
    assert len(exchanges) == count
    for exchange in exchanges:
        assert (exchange.method, exchange.path, exchange.status) == ("POST", "/v1/messages", 200)
        assert exchange.request_body["stream"] is True
        assert exchange.body.startswith(b"event: message_start\ndata: {")
        assert exchange.body.endswith(b"}\n\n")
        assert sse_types(exchange.body)[-1] == "message_stop"


@pytest.mark.parametrize("name", RECORDINGS)
async def test_recording_replays_through_sdk(
    name: str, anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    exchanges = load_recording(recording_path(name))
    anthropic_server.enqueue_recording(exchanges)
    for exchange in exchanges:
        body = dict(exchange.request_body)
        stream = await anthropic_client.messages.create(**body)
        types = [event.type async for event in stream]
        assert types == sse_types(exchange.body)
        assert types[0] == "message_start"
        assert types[-1] == "message_stop"
    anthropic_server.assert_all_served()
    requests = anthropic_server.requests
    assert [r.body for r in requests] == [e.request_body for e in exchanges]
    # anthropic 2.12 sends the key as "authorization: Bearer test-key", not "x-api-key".
    keys = {r.headers.get("x-api-key") or r.headers.get("authorization") for r in requests}
    assert keys <= {"test-key", "Bearer test-key"}
    assert all("anthropic-version" in r.headers for r in requests)


async def test_recorded_bytes_are_served_exactly(anthropic_server: AnthropicTestServer) -> None:
    (exchange,) = load_recording(recording_path("test_chat_completion_stream.yml"))
    anthropic_server.enqueue(exchange.reply())
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{anthropic_server.url}/v1/messages", json=REQUEST)
    assert response.content == exchange.body
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["transfer-encoding"] == "chunked"
    assert response.headers["request-id"].startswith("req_")


async def test_recorded_thinking_and_tool_use_accumulate(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    exchange = load_recording(recording_path("test_tool_call_reasoning.yml"))[0]
    anthropic_server.enqueue(exchange.reply())
    body = {k: v for k, v in exchange.request_body.items() if k != "stream"}
    async with anthropic_client.messages.stream(**body) as stream:
        message = await stream.get_final_message()
    thinking, tool = message.content
    assert thinking.type == "thinking"
    assert thinking.signature
    assert tool.type == "tool_use"
    assert tool.name == "run_me"
    assert message.stop_reason == "tool_use"
    # The second request carries the thinking block back unchanged, signature included.
    second = load_recording(recording_path("test_tool_call_reasoning.yml"))[1].request_body
    echoed = second["messages"][1]["content"][0]
    assert (echoed["thinking"], echoed["signature"]) == (thinking.thinking, thinking.signature)


# ----------------------------------------------------------------------------- scripting


async def test_requests_beyond_the_script_get_a_500_and_are_reported(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.sse(BODY))
    assert text_of(await collect(anthropic_client)) == "".join(TEXT)
    with pytest.raises(anthropic.InternalServerError, match="script exhausted") as info:
        await collect(anthropic_client)
    assert info.value.type == "api_error"
    assert len(anthropic_server.requests) == 2
    with pytest.raises(AssertionError, match="script exhausted"):
        anthropic_server.assert_all_served()


def test_unserved_replies_are_reported() -> None:
    with AnthropicTestServer() as server:
        server.enqueue(Reply.sse(BODY), Reply.error(529))
        with pytest.raises(AssertionError, match="2 queued replies never served"):
            server.assert_all_served()


# ----------------------------------------------------------------------------- HTTP errors

HTTP_ERRORS = [
    (Reply.error(429, retry_after=3, retry_after_ms=2500), anthropic.RateLimitError),
    (Reply.error(429), anthropic.RateLimitError),
    (Reply.error(529), anthropic.OverloadedError),
    (Reply.error(500), anthropic.InternalServerError),
    (Reply.error(503), anthropic.ServiceUnavailableError),
    (Reply.error(401), anthropic.AuthenticationError),
    (Reply.error(400, "prefill is not supported"), anthropic.BadRequestError),
    (Reply.error(404), anthropic.NotFoundError),
    (Reply.error(413), anthropic.ContentTooLargeError),
]
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@pytest.mark.parametrize(("reply", "error"), HTTP_ERRORS)
async def test_http_errors(
    reply: Reply,
    error: type[anthropic.APIStatusError],
    anthropic_server: AnthropicTestServer,
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    anthropic_server.enqueue(reply)
    with pytest.raises(anthropic.APIStatusError) as info:
        await collect(anthropic_client)
    exc = info.value
    assert type(exc) is error
    assert exc.status_code == reply.status
    assert exc.type == ERROR_TYPES[reply.status]
    assert exc.request_id is not None and exc.request_id.startswith("req_test")
    assert isinstance(exc.body, dict) and exc.body["request_id"] == exc.request_id
    headers = dict(reply.headers)
    assert exc.response.headers.get("retry-after") == headers.get("retry-after")
    assert exc.response.headers.get("retry-after-ms") == headers.get("retry-after-ms")
    anthropic_server.assert_all_served()


def test_error_class_aliases() -> None:
    assert issubclass(anthropic.OverloadedError, anthropic.InternalServerError)
    assert issubclass(anthropic.ServiceUnavailableError, anthropic.InternalServerError)
    assert anthropic.RequestTooLargeError is anthropic.ContentTooLargeError


async def test_prefill_message_reaches_the_exception(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    message = "This model does not support assistant message prefill."
    anthropic_server.enqueue(Reply.error(400, message))
    with pytest.raises(anthropic.BadRequestError) as info:
        await collect(anthropic_client)
    assert info.value.api_message == message


# ----------------------------------------------------------------------------- transport faults


@pytest.mark.parametrize(
    ("reset", "cause"), [(False, httpx2.RemoteProtocolError), (True, httpx2.ReadError)]
)
async def test_dropped_connection_is_an_api_connection_error(
    reset: bool,
    cause: type[Exception],
    anthropic_server: AnthropicTestServer,
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    anthropic_server.enqueue(Reply.drop(reset=reset))
    with pytest.raises(anthropic.APIConnectionError) as info:
        await collect(anthropic_client)
    assert type(info.value) is anthropic.APIConnectionError
    assert type(info.value.__cause__) is cause
    assert len(anthropic_server.requests) == 1


@pytest.mark.parametrize("chunked", [True, False])
async def test_reset_mid_body_raises_raw_httpx2_read_error(
    chunked: bool, anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.reset_after(BODY, events=4, chunked=chunked))
    seen: list[str] = []
    stream = await anthropic_client.messages.create(**REQUEST, stream=True)
    with pytest.raises(httpx2.ReadError):  # not wrapped in an anthropic.APIError
        async for event in stream:
            seen.append(event.type)
    assert seen == ["message_start", "content_block_start", "content_block_delta"]


async def test_fin_mid_body_raises_raw_httpx2_remote_protocol_error(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.close_after(BODY, events=4))
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        await collect(anthropic_client)


@pytest.mark.parametrize("chunked", [True, False])
async def test_body_without_message_stop_just_ends(
    chunked: bool, anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.truncated(BODY, chunked=chunked), Reply.sse(BODY))
    events = await collect(anthropic_client)
    assert [e.type for e in events][-2:] == ["content_block_stop", "message_delta"]
    assert text_of(events) == "".join(TEXT)
    assert [e.type for e in await collect(anthropic_client)][-1] == "message_stop"
    anthropic_server.assert_all_served()


async def test_error_event_mid_stream_is_a_plain_api_status_error(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.error_event_after(BODY, events=5))
    seen: list[str] = []
    stream = await anthropic_client.messages.create(**REQUEST, stream=True)
    with pytest.raises(anthropic.APIStatusError) as info:
        async for event in stream:
            seen.append(event.type)
    exc = info.value
    assert type(exc) is anthropic.APIStatusError
    assert exc.status_code == 200
    assert exc.type == "overloaded_error"
    assert exc.api_message == "Overloaded"
    assert exc.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert str(exc) == str(exc.body)
    assert seen == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
    ]


async def test_chunks_split_mid_line_and_mid_character(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.split(BODY), Reply.split(BODY))
    assert text_of(await collect(anthropic_client)) == "Hello wörld 🙂"
    # What arrives really is cut inside characters (h11 never merges two HTTP chunks).
    async with (
        httpx2.AsyncClient() as http,
        http.stream("POST", f"{anthropic_server.url}/v1/messages", json=REQUEST) as response,
    ):
        pieces = [piece async for piece in response.aiter_raw()]
    assert b"".join(pieces) == BODY.encode()
    assert any(p.endswith(b"\xc3") for p in pieces)  # first byte of "ö"
    assert any(p.endswith(b"\xf0") for p in pieces)  # first byte of "🙂"


# ----------------------------------------------------------------------------- timing


async def test_slow_stream_paces_events(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.sse(BODY, delay=0.015))
    stamps: list[float] = []
    stream = await anthropic_client.messages.create(**REQUEST, stream=True)
    async for _ in stream:
        stamps.append(time.monotonic())
    assert len(stamps) == 8
    assert stamps[-1] - stamps[0] >= 7 * 0.015  # the ping's pause counts too


async def consume(stream: AsyncIterator[RawMessageStreamEvent], into: list[str]) -> None:
    async for event in stream:
        into.append(event.type)


async def wait_until(predicate: Any, within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


async def test_hang_holds_the_stream_until_released(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    release = threading.Event()
    anthropic_server.enqueue(Reply.hang_after(BODY, events=3, release=release))
    seen: list[str] = []
    stream = await anthropic_client.messages.create(**REQUEST, stream=True)
    task = asyncio.create_task(consume(stream, seen))
    await wait_until(lambda: len(seen) == 2)  # message_start, content_block_start (+ ping)
    await asyncio.sleep(0.05)
    assert len(seen) == 2 and not task.done()
    release.set()
    await task
    assert seen[-1] == "message_stop"
    assert seen.count("content_block_delta") == 3


async def test_hang_ends_when_the_client_disconnects(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    anthropic_server.enqueue(Reply.hang_after(BODY, events=3, release=threading.Event()))
    seen: list[str] = []
    stream = await anthropic_client.messages.create(**REQUEST, stream=True)
    task = asyncio.create_task(consume(stream, seen))
    await wait_until(lambda: len(seen) == 2)
    task.cancel()  # what an interrupt does
    with pytest.raises(asyncio.CancelledError):
        await task
    await stream.close()
    await wait_until(lambda: anthropic_server.open_connections == 0)
    assert anthropic_server.failures == []


async def test_server_close_ends_a_hang(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    server = AnthropicTestServer().start()
    client = anthropic_client.with_options(base_url=server.url)
    server.enqueue(Reply.hang_after(BODY, events=3, release=threading.Event()))
    seen: list[str] = []
    stream = await client.messages.create(**REQUEST, stream=True)
    task = asyncio.create_task(consume(stream, seen))
    await wait_until(lambda: len(seen) == 2)
    started = time.monotonic()
    await asyncio.to_thread(server.close)
    assert time.monotonic() - started < 1.0
    with pytest.raises(httpx2.RemoteProtocolError):
        await task


# ----------------------------------------------------------------------------- synthesized streams


async def test_synthesized_tool_use_stream(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    tool_input = {"path": "notes/é.txt", "lines": [1, 2, 3]}
    body = sse_tool_use_response(
        "read_file", tool_input, text=["Let me ", "look."], tool_id="toolu_1"
    )
    anthropic_server.enqueue(Reply.sse(body))
    async with anthropic_client.messages.stream(**REQUEST) as stream:
        message = await stream.get_final_message()
    text, tool = message.content
    assert text.type == "text" and text.text == "Let me look."
    assert tool.type == "tool_use"
    assert (tool.id, tool.name, tool.input) == ("toolu_1", "read_file", tool_input)
    assert message.stop_reason == "tool_use"


async def test_synthesized_thinking_stream(
    anthropic_server: AnthropicTestServer, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    tool = ToolUse("run", {"code": "1+1"}, id="toolu_2")
    body = sse_thinking_response(["Think", "ing…"], ["Ok"], signature="sig==", tool=tool)
    anthropic_server.enqueue(Reply.sse(body))
    async with anthropic_client.messages.stream(**REQUEST) as stream:
        message = await stream.get_final_message()
    thinking, text, used = message.content
    assert thinking.type == "thinking"
    assert (thinking.thinking, thinking.signature) == ("Thinking…", "sig==")
    assert text.type == "text" and text.text == "Ok"
    assert used.type == "tool_use" and used.input == {"code": "1+1"}
    assert message.stop_reason == "tool_use"
    assert message.usage.input_tokens == 12


def test_exchange_reply_keeps_recorded_headers() -> None:
    exchange = Exchange(
        "POST", "/v1/messages", {}, 200, [("content-type", "text/event-stream")], b""
    )
    assert ("content-type", "text/event-stream") in exchange.reply().headers
