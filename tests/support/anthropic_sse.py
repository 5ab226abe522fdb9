"""Hand-made Anthropic Messages API server-sent-event bodies for tests.

The recorded exchanges in ``tests/fixtures/anthropic`` cover the happy paths; tests that need a
particular stream (a given text, a tool call with a given input, thinking followed by text) build
one here.  The events mirror what the real API sends: ``message_start`` with usage, a ``ping``
after the first block starts, ``content_block_start``/``delta``/``stop`` per block (an empty first
``input_json_delta`` for tool use, a ``signature_delta`` closing thinking), ``message_delta`` with
the stop reason and usage, then ``message_stop``.

All functions return ``str``; the server encodes it as UTF-8.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_MODEL",
    "Compaction",
    "Text",
    "Thinking",
    "ToolUse",
    "error_event",
    "split_json",
    "sse_event",
    "sse_message",
    "sse_text_response",
    "sse_thinking_response",
    "sse_tool_use_response",
]

DEFAULT_MODEL = "claude-haiku-4-5-20251001"
_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_test{next(_ids):020d}"


def sse_event(data: Mapping[str, Any], event: str | None = None) -> str:
    """One SSE event: ``event: <type>`` then ``data: <compact json>`` and a blank line."""
    name = event if event is not None else str(data["type"])
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {name}\ndata: {payload}\n\n"


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> str:
    """The ``event: error`` the API sends when a stream fails after it started."""
    return sse_event({"type": "error", "error": {"type": error_type, "message": message}})


@dataclass(frozen=True)
class Text:
    """A text block streamed as the given ``text_delta`` pieces."""

    chunks: Sequence[str]


@dataclass(frozen=True)
class Thinking:
    """A thinking block: ``thinking_delta`` pieces then one ``signature_delta``."""

    chunks: Sequence[str]
    signature: str = "EqQBCkYIBxgCKkDtestsignature"


@dataclass(frozen=True)
class ToolUse:
    """A tool_use block whose input JSON is streamed as ``pieces`` ``input_json_delta`` parts."""

    name: str
    input: Mapping[str, Any]
    id: str = field(default_factory=lambda: _next_id("toolu"))
    pieces: int = 3


@dataclass(frozen=True)
class Compaction:
    """A ``compaction`` block (server-side compaction): its start carries the signature and the
    tool changes, one ``compaction_delta`` the summary and the encrypted content."""

    content: str | None
    encrypted_content: str = "Eo8CCkYIBxgCKkDencrypted"
    signature: str = "EqQBCkYIBxgCKkDcompactsig"
    tool_changes: Sequence[Mapping[str, Any]] = ()


Block = Text | Thinking | ToolUse | Compaction


def split_json(value: Mapping[str, Any], pieces: int) -> list[str]:
    """``json.dumps(value)`` cut into ``pieces`` roughly equal parts (some may split mid-token)."""
    text = json.dumps(value, ensure_ascii=False)
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_events(index: int, block: Block) -> list[str]:
    def delta(body: dict[str, Any]) -> str:
        return sse_event({"type": "content_block_delta", "index": index, "delta": body})

    if isinstance(block, Text):
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [delta({"type": "text_delta", "text": c}) for c in block.chunks]
    elif isinstance(block, Thinking):
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [delta({"type": "thinking_delta", "thinking": c}) for c in block.chunks]
        deltas.append(delta({"type": "signature_delta", "signature": block.signature}))
    elif isinstance(block, Compaction):
        start = {
            "type": "compaction",
            "content": None,
            "signature": block.signature,
            "tool_changes": list(block.tool_changes),
        }
        deltas = [
            delta(
                {
                    "type": "compaction_delta",
                    "content": block.content,
                    "encrypted_content": block.encrypted_content,
                }
            )
        ]
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        parts = ["", *split_json(block.input, block.pieces)]
        deltas = [delta({"type": "input_json_delta", "partial_json": p}) for p in parts]
    opening = sse_event({"type": "content_block_start", "index": index, "content_block": start})
    closing = sse_event({"type": "content_block_stop", "index": index})
    return [opening, *deltas, closing]


def sse_message(
    blocks: Sequence[Block],
    *,
    stop_reason: str | None = "end_turn",
    model: str = DEFAULT_MODEL,
    message_id: str | None = None,
    input_tokens: int = 12,
    output_tokens: int | None = None,
    ping: bool = True,
    usage_extra: Mapping[str, Any] | None = None,
) -> str:
    """A complete streamed message made of ``blocks``, ending with ``message_stop``."""
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 1,
        "service_tier": "standard",
        **{k: v for k, v in (usage_extra or {}).items() if k != "iterations"},
    }
    message: dict[str, Any] = {
        "model": model,
        "id": message_id or _next_id("msg"),
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events = [sse_event({"type": "message_start", "message": message})]
    for index, block in enumerate(blocks):
        block_events = _block_events(index, block)
        if ping and index == 0:
            block_events.insert(1, sse_event({"type": "ping"}))
        events.extend(block_events)
    if output_tokens is None:
        output_tokens = sum(len(e) // 40 for e in events) or 1
    final_usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        **(usage_extra or {}),  # e.g. cache figures, or ``iterations`` with a compaction's
    }
    stop = {"stop_reason": stop_reason, "stop_sequence": None}
    events.append(sse_event({"type": "message_delta", "delta": stop, "usage": final_usage}))
    events.append(sse_event({"type": "message_stop"}))
    return "".join(events)


def sse_text_response(
    chunks: Sequence[str], *, stop_reason: str = "end_turn", **kwargs: Any
) -> str:
    """A message with one text block streamed as ``chunks``."""
    return sse_message([Text(chunks)], stop_reason=stop_reason, **kwargs)


def sse_tool_use_response(
    name: str,
    tool_input: Mapping[str, Any],
    *,
    text: Sequence[str] = (),
    tool_id: str | None = None,
    pieces: int = 3,
    **kwargs: Any,
) -> str:
    """Optional text, then one tool_use block; ``stop_reason`` is ``tool_use``."""
    blocks: list[Block] = [Text(text)] if text else []
    tool = (
        ToolUse(name, tool_input, pieces=pieces)
        if tool_id is None
        else ToolUse(name, tool_input, id=tool_id, pieces=pieces)
    )
    blocks.append(tool)
    kwargs.setdefault("stop_reason", "tool_use")
    return sse_message(blocks, **kwargs)


def sse_thinking_response(
    thinking: Sequence[str],
    text: Sequence[str] = (),
    *,
    signature: str = "EqQBCkYIBxgCKkDtestsignature",
    tool: ToolUse | None = None,
    **kwargs: Any,
) -> str:
    """A thinking block (with signature), then text and/or a tool_use block."""
    blocks: list[Block] = [Thinking(thinking, signature)]
    if text:
        blocks.append(Text(text))
    if tool is not None:
        blocks.append(tool)
        kwargs.setdefault("stop_reason", "tool_use")
    return sse_message(blocks, **kwargs)
