"""Turns the Anthropic Messages API's raw stream events into Part / Flush / Finished.

Dispatch is on the ``type`` string, never on SDK classes, so event and block types this SDK
does not know pass through: an unknown block is flushed with its raw JSON (kept as an opaque
block and sent back), an unknown event is remembered on ``Finished.details``. A tool call's
input JSON is passed on piece by piece (:class:`ToolInputDelta`, for the page to show; the first,
empty, at the block's start names the tool) and parsed once, at the block's end, into the one
complete ToolCall. Usage in ``message_delta`` is cumulative: it
overwrites, never adds.

A ``compaction`` block (server-side compaction, docs/architecture.md, "Long threads") is kept as an
opaque block whose raw JSON is what the server sent: its ``compaction_delta`` sets ``content`` and
``encrypted_content`` (as the SDK's own accumulator does), a ``signature_delta`` adds to its
signature, ``tool_changes`` stay as they came. Its event's ``metadata.compaction`` says how it came
about and the sizes before and after. The tokens of the compaction iteration itself
(``usage.iterations``) are billed but are not in the top-level usage: they are added to the cycle's
usage, while ``Finished.details["context_tokens"]`` is the context in use after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..model.events import (
    Finished,
    Flush,
    MessageDelta,
    Part,
    ReasoningDelta,
    ToolCall,
    ToolInputDelta,
    Usage,
)

if TYPE_CHECKING:
    from ..model.events import FinishReason, StreamEvent

__all__ = ["StreamAdapter", "as_dict"]

_REASONS: dict[str, FinishReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_window_exceeded",
    "compaction": "compaction",
}
_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def as_dict(value: Any) -> Any:
    """The JSON the server sent for an SDK object (or the dict itself)."""
    if isinstance(value, dict):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_unset=True)
    return value


@dataclass
class _Block:
    type: str
    raw: dict[str, Any]
    json_parts: list[str] = field(default_factory=list)
    signature: str | None = None
    citations: list[Any] = field(default_factory=list)
    opened: bool = False  # a Part for it reached the caller


class StreamAdapter:
    """Feed raw events one by one; iterate what each one produces."""

    def __init__(self, compaction: dict[str, Any] | None = None) -> None:
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, int] = {}
        self._iterations: dict[str, int] = {}  # compaction iterations' usage, summed
        self._compaction = compaction or {}  # metadata for a compaction block (how, before)
        self._started_input: int | None = None  # the input of message_start, all of it
        self.model: str | None = None
        self.stop_reason: str | None = None
        self.stop_details: Any = None
        self.finished = False
        self.unknown_events: list[Any] = []

    def feed(self, event: Any) -> Iterator[StreamEvent]:
        kind = _get(event, "type")
        if kind == "content_block_delta":
            yield from self._delta(int(_get(event, "index")), _get(event, "delta"))
        elif kind == "content_block_start":
            yield from self._start(int(_get(event, "index")), as_dict(_get(event, "content_block")))
        elif kind == "content_block_stop":
            yield from self._stop(int(_get(event, "index")))
        elif kind == "message_start":
            message = _get(event, "message")
            self.model = _get(message, "model")
            self._take_usage(_get(message, "usage"))
            self._started_input = self.context_tokens
        elif kind == "message_delta":
            delta = _get(event, "delta")
            self.stop_reason = _get(delta, "stop_reason") or self.stop_reason
            details = _get(delta, "stop_details")
            if details is not None:
                self.stop_details = as_dict(details)
            self._take_usage(_get(event, "usage"))
        elif kind == "message_stop":
            self.finished = True
            yield self._finished()
        elif kind != "ping":
            self.unknown_events.append(as_dict(event))

    @property
    def usage(self) -> Usage:
        """What the response is billed: the top-level usage plus its compaction iterations."""
        return Usage(
            **{
                name: self._usage.get(name, 0) + self._iterations.get(name, 0)
                for name in _USAGE_FIELDS
            },
            cache_creation_1h_input_tokens=self._usage.get("cache_creation_1h_input_tokens", 0),
        )

    @property
    def context_tokens(self) -> int:
        """The context in use after this response: its input (cached or not) and output."""
        return sum(self._usage.get(name, 0) for name in _USAGE_FIELDS)

    def _take_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for name in _USAGE_FIELDS:
            value = _get(usage, name)
            if isinstance(value, int):
                self._usage[name] = value
        hour = _get(_get(usage, "cache_creation"), "ephemeral_1h_input_tokens")
        if isinstance(hour, int):  # what went to the 1-hour cache, of the cache writes
            self._usage["cache_creation_1h_input_tokens"] = hour
        iterations = _get(usage, "iterations")
        if isinstance(iterations, list):
            summed: dict[str, int] = {}
            for item in iterations:
                if _get(item, "type") != "compaction":
                    continue
                for name in _USAGE_FIELDS:
                    value = _get(item, name)
                    if isinstance(value, int):
                        summed[name] = summed.get(name, 0) + value
            self._iterations = summed

    def _start(self, index: int, raw: Any) -> Iterator[StreamEvent]:
        block = raw if isinstance(raw, dict) else {"type": "unknown", "value": raw}
        self._blocks[index] = started = _Block(str(block.get("type")), dict(block))
        if started.type == "tool_use":  # the page draws the call's card from here on
            yield Part(index, _input_piece(started, ""))

    def _delta(self, index: int, delta: Any) -> Iterator[StreamEvent]:
        block = self._blocks.get(index)
        kind = _get(delta, "type")
        if block is None:  # a delta without its start: keep the text rather than drop it
            block = self._blocks[index] = _Block(
                "thinking" if kind == "thinking_delta" else "text", {"type": "text"}
            )
        if kind == "text_delta":
            text = _get(delta, "text") or ""
            if text:
                block.opened = True
                yield Part(index, MessageDelta(text))
        elif kind == "thinking_delta":
            text = _get(delta, "thinking") or ""
            if text:
                block.opened = True
                yield Part(index, ReasoningDelta(text))
        elif kind == "signature_delta":
            block.signature = (block.signature or "") + (_get(delta, "signature") or "")
        elif kind == "compaction_delta":
            fields = as_dict(delta)
            for name in ("content", "encrypted_content"):
                if isinstance(fields, dict) and name in fields:
                    block.raw[name] = fields[name]
        elif kind == "input_json_delta":
            text = _get(delta, "partial_json") or ""
            block.json_parts.append(text)
            if text and block.type == "tool_use":  # a server tool's input stays in its block
                yield Part(index, _input_piece(block, text))
        elif kind == "citations_delta":
            block.citations.append(as_dict(_get(delta, "citation")))
        else:
            block.raw.setdefault("_unknown_deltas", []).append(as_dict(delta))

    def _stop(self, index: int) -> Iterator[StreamEvent]:
        block = self._blocks.pop(index, None)
        if block is None:
            return
        if block.type == "text":
            yield Flush(index, {"citations": block.citations} if block.citations else {})
        elif block.type == "thinking":
            if not block.opened:
                yield Part(index, ReasoningDelta(""))  # thinking omitted from display
            yield Flush(index, {"signature": block.signature or block.raw.get("signature", "")})
        elif block.type == "tool_use":
            yield Part(index, self._tool_call(block))
            raw = {key: value for key, value in block.raw.items() if key != "input"}
            yield Flush(index, {"raw_block": raw})
        else:
            raw = dict(block.raw)
            if block.json_parts:
                raw["input"] = _parse_object("".join(block.json_parts))[0]
            if block.signature is not None:
                raw["signature"] = str(raw.get("signature") or "") + block.signature
            if block.type == "compaction":
                yield Flush(index, {"raw_block": raw, "compaction": self._compaction_note(raw)})
            else:
                yield Flush(index, {"raw_block": raw})

    def _compaction_note(self, raw: dict[str, Any]) -> dict[str, Any]:
        """How a compaction block came about, and the sizes before and after (tokens)."""
        note = dict(self._compaction)
        if note.get("tokens_before") is None and note.get("mode") == "summarize":
            note["tokens_before"] = self._started_input  # a summarize request reads it all
        content = raw.get("content")
        note["tokens_after"] = -(-len(content) // 4) if isinstance(content, str) else None
        return note

    @staticmethod
    def _tool_call(block: _Block) -> ToolCall:
        text = "".join(block.json_parts)
        arguments, error = _parse_object(text)
        if error is not None:
            return ToolCall(str(block.raw.get("id")), str(block.raw.get("name")), {}, text, error)
        return ToolCall(str(block.raw.get("id")), str(block.raw.get("name")), arguments)

    def _finished(self) -> Finished:
        details: dict[str, Any] = {}
        if self.stop_details is not None:
            details["stop_details"] = self.stop_details
            explanation = _get(self.stop_details, "explanation")
            if explanation:
                details["explanation"] = explanation
        if self.unknown_events:
            details["unknown_events"] = self.unknown_events
        if self._usage:
            details["context_tokens"] = self.context_tokens
        reason = _REASONS.get(self.stop_reason or "", "other")
        if reason == "other" and self.stop_reason:
            details["stop_reason"] = self.stop_reason
        return Finished(reason, self.usage, details, model=self.model)


def _input_piece(block: _Block, text: str) -> ToolInputDelta:
    return ToolInputDelta(text, str(block.raw.get("id")), str(block.raw.get("name")))


def _parse_object(text: str) -> tuple[dict[str, Any], str | None]:
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"invalid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return value, None


def _get(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)
