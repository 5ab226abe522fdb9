"""Turns Chat Completions chunks (streamed, or a whole answer) into Part / Flush / Finished.

Every field is read defensively: servers add their own (``timings``, ``provider``,
``native_finish_reason``...) and leave others out, so a chunk is read as JSON by name, never
through the SDK's types. Text and reasoning each open a block of their own; a change from one
to the other flushes the block before (reasoning is shown, never sent back). Reasoning comes
as ``delta.reasoning`` or ``delta.reasoning_content``, or only in OpenRouter's
``reasoning_details`` (its text items: encrypted ones are not shown). Tool calls arrive in
pieces keyed by ``index`` (id and name on the first piece, the arguments split across many,
several calls in parallel): a call's first piece closes the open text block and gives the call
a block of its own, each argument piece is passed on as it comes (:class:`ToolInputDelta`, for
the page to show), and the call is yielded once, complete, when the stream ends, its arguments
parsed then (bad JSON: ``parse_error``). Usage comes in a chunk of its own after the
one with ``finish_reason``, often with empty ``choices``, or not at all: then ``Finished.usage``
is None (cost unknown, never zero). A stream that ends without a ``finish_reason`` is
incomplete: :meth:`ChunkAdapter.end` raises a retryable ProviderError.

A whole answer (``--stream off``) is replayed as one chunk (:func:`completion_chunks`) through
the same adapter, so both paths yield the same events.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ProviderError
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

__all__ = ["ChunkAdapter", "as_json", "chat_usage", "completion_chunks"]

_REASONS: dict[str, FinishReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_FILTERED = "The server's content filter stopped the answer."


def as_json(value: Any) -> Any:
    """The JSON the server sent for an SDK object (its unknown fields included)."""
    if isinstance(value, dict | list | str | int | float) or value is None:
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value


def chat_usage(usage: Any) -> Usage | None:
    """Chat Completions usage in Anthropic's terms: input without the cached tokens (read or
    written), which are counted apart. None when the server sent no counts."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = _count(details.get("cached_tokens"))
    written = _count(details.get("cache_write_tokens"))
    return Usage(
        input_tokens=max(0, _count(prompt) - cached - written),
        output_tokens=_count(completion),
        cache_read_input_tokens=cached,
        cache_creation_input_tokens=written,
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


@dataclass
class _Call:
    """A tool call being assembled from its pieces, in block ``index``; ``number`` counts the
    calls of the answer from 0 (a server that gives no id gets ``call_<number>``)."""

    index: int
    number: int
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def take(self, piece: dict[str, Any]) -> str:
        """Add a piece; the argument text it brought."""
        self.call_id = self.call_id or str(piece.get("id") or "")
        function = piece.get("function")
        if not isinstance(function, dict):
            return ""
        self.name = self.name or str(function.get("name") or "")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a server that sends the object itself
            arguments = json.dumps(arguments)
        if not isinstance(arguments, str):
            return ""
        self.arguments.append(arguments)
        return arguments

    def piece(self, text: str) -> ToolInputDelta:
        return ToolInputDelta(text, self.call_id or f"call_{self.number}", self.name)

    def complete(self) -> ToolCall:
        call_id = self.call_id or f"call_{self.number}"  # a server that gave no id: our own
        text = "".join(self.arguments)
        if not text.strip():
            return ToolCall(call_id, self.name, {})
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return ToolCall(
                call_id, self.name, {}, text, f"invalid JSON ({exc.msg} at character {exc.pos})"
            )
        if not isinstance(value, dict):
            return ToolCall(
                call_id, self.name, {}, text, f"expected a JSON object, got {type(value).__name__}"
            )
        return ToolCall(call_id, self.name, value)


class ChunkAdapter:
    """Feed raw chunks one by one; iterate what each produces; then :meth:`end`."""

    def __init__(self) -> None:
        self._next = 0  # the next block index
        self._open: tuple[str, int] | None = None  # the text block open: (kind, index)
        self._calls: dict[int, _Call] = {}  # by the server's index, in order of arrival
        self._refusal: list[str] = []
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def feed(self, chunk: Any) -> Iterator[StreamEvent]:
        data = as_json(chunk)
        if not isinstance(data, dict):
            return
        if isinstance(data.get("model"), str) and data["model"]:
            self.model = data["model"]
        usage = chat_usage(data.get("usage"))
        if usage is not None:
            self.usage = usage  # cumulative where a server repeats it: the last one counts
        for choice in data.get("choices") or ():
            if isinstance(choice, dict) and choice.get("index") in (0, None):
                yield from self._choice(choice)

    def end(self) -> Iterator[StreamEvent]:
        """After the last chunk: the open block, the tool calls, then Finished."""
        if self.finish_reason is None:
            raise ProviderError(
                "the response ended before it was complete (no finish_reason)",
                kind="incomplete_stream",
                retryable=True,
            )
        yield from self._close()
        for call in self._calls.values():
            yield Part(call.index, call.complete())
            yield Flush(call.index)
        yield Finished(
            _REASONS.get(self.finish_reason, "other"), self.usage, self._details(), self.model
        )

    def _choice(self, choice: dict[str, Any]) -> Iterator[StreamEvent]:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            reasoning = reasoning_text(delta)
            if reasoning:
                yield from self._text("reasoning", reasoning)
            content = delta.get("content")
            if isinstance(content, str) and content:
                yield from self._text("message", content)
            if isinstance(delta.get("refusal"), str):
                self._refusal.append(delta["refusal"])
            for piece in delta.get("tool_calls") or ():
                if isinstance(piece, dict):
                    yield from self._tool_piece(piece)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason

    def _tool_piece(self, piece: dict[str, Any]) -> Iterator[StreamEvent]:
        """A piece of a tool call: its first opens the call's block (the text before it is
        complete), every one that brings argument text passes it on."""
        number = piece.get("index")
        key = number if isinstance(number, int) else len(self._calls)
        call = self._calls.get(key)
        first = call is None
        if call is None:
            yield from self._close()
            call = self._calls[key] = _Call(self._take_index(), len(self._calls))
        text = call.take(piece)
        if text or first:
            yield Part(call.index, call.piece(text))

    def _text(self, kind: str, text: str) -> Iterator[StreamEvent]:
        if self._open is not None and self._open[0] != kind:
            yield from self._close()
        if self._open is None:
            self._open = (kind, self._take_index())
        index = self._open[1]
        yield Part(index, ReasoningDelta(text) if kind == "reasoning" else MessageDelta(text))

    def _close(self) -> Iterator[StreamEvent]:
        if self._open is not None:
            yield Flush(self._open[1])
            self._open = None

    def _take_index(self) -> int:
        self._next += 1
        return self._next - 1

    def _details(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        reason = self.finish_reason
        if reason not in _REASONS:
            details["stop_reason"] = reason
        refusal = "".join(self._refusal)
        if refusal:
            details["explanation"] = refusal
        elif reason == "content_filter":
            details["explanation"] = _FILTERED
        return details


def reasoning_text(delta: dict[str, Any]) -> str:
    """A delta's reasoning: ``reasoning`` or ``reasoning_content``, else the text items of
    ``reasoning_details`` (which repeat ``reasoning`` when both come)."""
    for name in ("reasoning", "reasoning_content"):
        value = delta.get(name)
        if isinstance(value, str) and value:
            return value
    details = delta.get("reasoning_details")
    if not isinstance(details, list):
        return ""
    pieces = []
    for item in details:
        if isinstance(item, dict):
            text = item.get("text") if item.get("type") != "reasoning.summary" else None
            text = text if isinstance(text, str) else item.get("summary")
            if isinstance(text, str):
                pieces.append(text)
    return "".join(pieces)


def completion_chunks(completion: Any) -> Iterator[dict[str, Any]]:
    """A whole ChatCompletion (``stream=False``) as the one chunk it would have streamed."""
    data = as_json(completion)
    if not isinstance(data, dict):
        return
    choices = []
    for choice in data.get("choices") or ():
        if isinstance(choice, dict):
            message = dict(choice.get("message") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [
                    {**call, "index": number}
                    for number, call in enumerate(calls)
                    if isinstance(call, dict)
                ]
            choices.append({**choice, "delta": message})
    yield {**data, "choices": choices}
