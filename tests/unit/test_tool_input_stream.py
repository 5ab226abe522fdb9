"""A tool call's arguments stream as the model writes them, from every provider.

Each provider, through its real SDK and the recorded bytes served on 127.0.0.1, yields the
argument text piece by piece (``ToolInputDelta``, for the page's draft card) before the one
complete ``ToolCall`` of the same block; the pieces are exactly the recorded ones, name the
call, and change nothing of the conversation events (built with and without them: the same).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_turns.engine.builder import EventBuilder
from jupyter_turns.model.events import (
    ChatRequest,
    Flush,
    Part,
    StreamEvent,
    ToolCall,
    ToolInputDelta,
)
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.providers.base import Request
from jupyter_turns.providers.openai_chat import OpenAIChatProvider
from jupyter_turns.providers.openai_responses import OpenAIResponsesProvider
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from tests.support.anthropic_replies import load_recording, recording_path
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.openai_chat_replies import chunk_data, recording, served_at
from tests.support.openai_sse import openai_recording


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _sse_data(body: bytes) -> list[dict[str, Any]]:
    """The JSON of every SSE data line, parsed independently of the SDKs."""
    return [
        json.loads(line[len("data: ") :])
        for line in body.decode().splitlines()
        if line.startswith("data: {")
    ]


async def _stream(provider: Any) -> list[StreamEvent]:
    request = Request(events=(ChatRequest(content="Run the tool."),), thinking="off")
    return [item async for item in provider.stream(request)]


def _calls(items: list[StreamEvent]) -> dict[str, list[str]]:
    """Each complete call's argument pieces, by call id, checked for their place: every piece
    of its block comes before the call, names it, and the block holds nothing else."""
    parts = [item for item in items if isinstance(item, Part)]
    pieces: dict[str, list[str]] = {}
    for call in (p for p in parts if isinstance(p.content, ToolCall)):
        assert isinstance(call.content, ToolCall)
        *before, last = [p for p in parts if p.index == call.index]
        assert last is call and before, "the call streamed no piece"
        for piece in before:
            assert isinstance(piece.content, ToolInputDelta)
            assert (piece.content.call_id, piece.content.name) == (
                call.content.call_id,
                call.content.name,
            )
        flush = next(i for i in items if isinstance(i, Flush) and i.index == call.index)
        assert items.index(flush) > items.index(call)
        texts = [p.content.text for p in before if isinstance(p.content, ToolInputDelta)]
        assert call.content.arguments == json.loads("".join(texts))
        pieces[call.content.call_id] = [text for text in texts if text]
    return pieces


def _events(items: list[StreamEvent]) -> list[dict[str, Any]]:
    """The conversation events the items make (ids and times left out)."""
    builder, events = EventBuilder(), []
    for item in items:
        if isinstance(item, Part):
            builder.add(item)
        elif isinstance(item, Flush):
            events += [event for _, event in builder.flush(item)]
    events += builder.drain()
    return [event.model_dump(exclude={"id", "timestamp"}) for event in events]


def _without_pieces(items: list[StreamEvent]) -> list[StreamEvent]:
    return [i for i in items if not (isinstance(i, Part) and isinstance(i.content, ToolInputDelta))]


async def test_anthropic_streams_input_json_deltas_into_pieces_before_the_call(
    server: AnthropicTestServer,
) -> None:
    [first, _] = load_recording(recording_path("test_tool_call_stream.yml"))
    server.enqueue_recording([first])
    provider = AnthropicProvider("claude-haiku-4-5", api_key="test-key", base_url=server.url)
    items = await _stream(provider)
    data = _sse_data(first.body)
    [start] = [d["content_block"] for d in data if d["type"] == "content_block_start"]
    recorded = [
        d["delta"]["partial_json"]
        for d in data
        if d["type"] == "content_block_delta" and d["delta"]["partial_json"]
    ]
    assert len(recorded) > 1
    assert _calls(items) == {start["id"]: recorded}
    # the call's card opens at the block's start, named, before any argument text
    opening = next(i for i in items if isinstance(i, Part))
    assert opening.content == ToolInputDelta("", start["id"], "run_me")
    assert _events(items) == _events(_without_pieces(items))
    server.assert_all_served()


async def test_openai_responses_streams_argument_deltas_into_pieces_before_the_call(
    server: AnthropicTestServer,
) -> None:
    [first, _] = openai_recording("test_tool_call_stream.yml")
    server.enqueue_recording([first])
    provider = OpenAIResponsesProvider(
        "gpt-5-mini", api_key="sk-test-openai", base_url=f"{server.url}/v1"
    )
    items = await _stream(provider)
    data = _sse_data(first.body)
    [item] = [
        d["item"]
        for d in data
        if d["type"] == "response.output_item.added" and d["item"]["type"] == "function_call"
    ]
    recorded = [d["delta"] for d in data if d["type"] == "response.function_call_arguments.delta"]
    assert len(recorded) > 1
    assert _calls(items) == {item["call_id"]: recorded}
    assert _events(items) == _events(_without_pieces(items))
    server.assert_all_served()


@pytest.mark.parametrize(
    "name",
    [
        "llamacpp/test_tool_call_stream.yml",
        "openrouter/test_anthropic_opus_5_parallel_tool_round_trip.yml",  # two calls
    ],
)
async def test_chat_completions_stream_argument_pieces_by_call_index_before_each_call(
    server: AnthropicTestServer, name: str
) -> None:
    [first, *_] = recording(name)
    server.enqueue_recording([first])
    provider = OpenAIChatProvider(
        base_url=server.url + served_at([first]), model=first.request_body["model"]
    )
    items = await _stream(provider)
    ids: dict[int, str] = {}
    recorded: dict[str, list[str]] = {}
    for data in chunk_data(first.body):
        for choice in data.get("choices") or ():
            for piece in (choice.get("delta") or {}).get("tool_calls") or ():
                call_id = ids.setdefault(piece["index"], piece.get("id"))
                text = piece.get("function", {}).get("arguments")
                recorded.setdefault(call_id, [])
                if text:
                    recorded[call_id].append(text)
    assert recorded and all(recorded.values())
    assert _calls(items) == recorded
    # each call opens its block after the text before it: blocks open in stream order
    opened = list(dict.fromkeys(i.index for i in items if isinstance(i, Part)))
    assert opened == sorted(opened)
    assert _events(items) == _events(_without_pieces(items))
    server.assert_all_served()


async def test_a_scripted_call_streams_its_arguments_only_when_asked() -> None:
    arguments = {"a": 2, "b": 3}
    whole = cycle(message("Adding."), tool_call("add", arguments, call_id="c1"))
    streamed = cycle(message("Adding."), tool_call("add", arguments, call_id="c1", chunks=3))
    assert not any(isinstance(i, Part) and isinstance(i.content, ToolInputDelta) for i in whole)
    provider = ScriptedProvider([streamed])
    items = await _stream(provider)
    assert _calls(items) == {"c1": [p for p in _pieces(json.dumps(arguments), 3)]}
    assert _events(items) == _events(await _stream(ScriptedProvider([whole])))


def _pieces(text: str, count: int) -> list[str]:
    size = -(-len(text) // count)
    return [text[i : i + size] for i in range(0, len(text), size)]
