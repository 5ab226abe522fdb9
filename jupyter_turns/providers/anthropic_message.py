"""The non-streaming path: a complete Messages API response as the raw stream events it would
have been, and how a streaming request answered without a stream is recognized.

Some endpoints and proxies do not stream. Rather than a second decoder, a whole ``Message`` is
replayed as ``message_start``, per block ``content_block_start`` / deltas /
``content_block_stop``, ``message_delta`` and ``message_stop``, and fed to the same
:class:`~.anthropic_stream.StreamAdapter`: text, reasoning with its signature, redacted reasoning,
tool calls, server-tool blocks, citations, stop reasons and usage come out exactly as they do
from a stream, so everything downstream (builder, widget, record) is unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from ..model.events import Finished, StreamEvent
from .anthropic_stream import StreamAdapter, as_dict

__all__ = ["NOT_STREAMING", "is_event_stream", "message_events", "whole_response", "with_pending"]

NOT_STREAMING = "This endpoint does not stream; continuing without streaming."


async def is_event_stream(
    response: Any, stream_types: tuple[str, ...] = ("text/event-stream",)
) -> bool:
    """Whether the SDK's stream is really one: a proxy may answer a stream request with JSON,
    and may leave the content type out. Without one the body is read first (such a stream is
    then shown at once, not as it arrives) and is no stream when it is a Message object.
    ``stream_types`` are the content types of a stream where the answer comes from (Bedrock
    streams ``application/vnd.amazon.eventstream``)."""
    http = getattr(response, "response", None)
    if http is None:
        return True
    content_type = str(http.headers.get("content-type", ""))
    if content_type:
        return content_type.startswith(stream_types)
    body = await http.aread()  # the SDK's stream then reads the same bytes again
    try:
        parsed = json.loads(body)
    except ValueError:
        return True
    return not (isinstance(parsed, dict) and parsed.get("type") == "message")


async def whole_response(
    create: Callable[..., Awaitable[Any]],
    params: dict[str, Any],
    pending: dict[str, Any],
    compaction: dict[str, Any] | None = None,
) -> AsyncIterator[StreamEvent]:
    """One non-streaming request, its message replayed as stream events (nothing is shown
    before the whole answer is in: Stop cancels the request). ``pending`` details (the
    provider's notices...) go on the answer's ``Finished`` and are cleared only then, so a
    request that fails and is retried loses none. ``compaction`` is the metadata of a
    compaction block the answer may hold."""
    message = as_dict(await create(**{**params, "stream": False}))
    adapter = StreamAdapter(compaction)
    for event in message_events(message):
        for item in adapter.feed(event):
            if pending and isinstance(item, Finished):
                item = with_pending(item, pending)
            yield item


def with_pending(finished: Finished, pending: dict[str, Any]) -> Finished:
    """``finished`` with the details the provider held for the next answer, which it forgets."""
    details = {**finished.details, **pending}
    pending.clear()
    return dataclasses.replace(finished, details=details)


# what a block's start event leaves out: its deltas carry it
_STREAMED = {
    "text": ("text", "citations"),
    "thinking": ("thinking", "signature"),
    "tool_use": ("input",),
    "server_tool_use": ("input",),
}


def message_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The raw stream events of ``message`` (the JSON body of a non-streaming response)."""
    usage = dict(message.get("usage") or {})
    ended = ("content", "stop_reason", "stop_sequence", "stop_details", "usage")
    start = {k: v for k, v in message.items() if k not in ended}
    yield {
        "type": "message_start",
        "message": {**start, "content": [], "stop_reason": None, "usage": usage},
    }
    for index, block in enumerate(message.get("content") or []):
        yield from _block_events(index, block)
    yield {
        "type": "message_delta",
        "delta": {k: message.get(k) for k in ended[1:4] if k in message or k != "stop_details"},
        "usage": usage,
    }
    yield {"type": "message_stop"}


def _block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    kind = block.get("type")
    streamed = _STREAMED.get(str(kind), ())
    opened = {k: v for k, v in block.items() if k not in streamed}
    if kind == "text":
        opened["text"] = ""
    elif kind == "thinking":
        opened.update(thinking="", signature="")
    elif kind in ("tool_use", "server_tool_use"):
        opened["input"] = {}
    yield {"type": "content_block_start", "index": index, "content_block": opened}
    for delta in _deltas(kind, block):
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def _deltas(kind: Any, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if kind == "text":
        for citation in block.get("citations") or []:
            yield {"type": "citations_delta", "citation": citation}
        if block.get("text"):
            yield {"type": "text_delta", "text": block["text"]}
    elif kind == "thinking":
        if block.get("thinking"):
            yield {"type": "thinking_delta", "thinking": block["thinking"]}
        if block.get("signature"):
            yield {"type": "signature_delta", "signature": block["signature"]}
    elif kind in ("tool_use", "server_tool_use"):
        arguments = block.get("input")
        if arguments:
            yield {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
