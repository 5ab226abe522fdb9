"""Turns the OpenAI Responses API's raw stream events into Part / Flush / Finished.

Dispatch is on the ``type`` string, never on SDK classes, so events this SDK or this module
does not know pass: they are remembered on ``Finished.details["unknown_events"]`` (the engine
shows a notice), and so is an output item of a type this module does not know (a server tool's
call): it is not sent back (a ``block`` event is Anthropic's alone).

Each output item becomes blocks in order: a message's text parts
(``response.output_text.delta``; a refusal part, ``response.refusal.delta``, is shown as text
too and ends the answer with reason ``refusal``), a reasoning item's summary
(``response.reasoning_summary_text.delta``) flushed at ``response.output_item.done`` with
``{"api": "openai-responses", "raw_item": <the item as received>}`` (a reasoning item without a
summary still flushes, empty: its encrypted content goes back), a function call as its argument
text piece by piece from ``response.output_item.added`` on (:class:`ToolInputDelta`, for the
page to show), then one complete ToolCall at the item's end (its arguments parsed once; bad JSON
gives ``parse_error``). ``response.completed`` / ``response.incomplete`` end it with the usage
(Anthropic semantics: input without the cached and cache-written tokens; reasoning tokens are
part of the output); ``response.failed`` and ``error`` raise a ProviderError.

A whole (non-streamed) Response is replayed as the events it would have streamed
(:func:`response_events`) and fed to the same adapter: ``--stream off`` has no second parser.
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
from .anthropic_stream import as_dict
from .openai_errors import coded_error
from .openai_wire import API

if TYPE_CHECKING:
    from ..model.events import FinishReason, StreamEvent

__all__ = ["ResponsesAdapter", "response_events", "responses_usage"]

_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "refusal",
}
# events that carry nothing the deltas and the item's end do not
_QUIET = frozenset(
    {
        "response.queued",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.done",
        "response.function_call_arguments.done",
    }
)


@dataclass
class _Item:
    """One output item while it streams."""

    type: str
    raw: dict[str, Any]
    texts: dict[int, int] = field(default_factory=dict)  # content/summary part -> block index
    arguments: list[str] = field(default_factory=list)
    index: int | None = None  # the block of a reasoning item or a function call
    done: bool = False  # its output_item.done came: ``raw`` is the item as the API ended it


class ResponsesAdapter:
    """Feed raw events one by one; iterate what each one produces."""

    def __init__(self) -> None:
        self._items: dict[int, _Item] = {}  # output_index -> the item being streamed
        self._next_index = 0
        self._calls = 0
        self._refusal: list[str] = []
        self.model: str | None = None
        self.finished = False
        self.unknown_events: list[Any] = []

    def feed(self, event: Any) -> Iterator[StreamEvent]:
        data = as_dict(event)
        kind = str(data.get("type") if isinstance(data, dict) else "")
        if kind in _QUIET or not isinstance(data, dict):
            return
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.unknown_events.append(data)
            return
        yield from handler(self, data)

    # ------------------------------------------------------------------ items

    def _started(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        response = data.get("response")
        if isinstance(response, dict) and response.get("model"):
            self.model = str(response["model"])
        return iter(())

    def _added(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        raw = data.get("item")
        raw = dict(raw) if isinstance(raw, dict) else {}
        item = self._items[int(data.get("output_index") or 0)] = _Item(str(raw.get("type")), raw)
        if item.type == "function_call":  # the page draws the call's card from here on
            item.index = self._new_index()
            yield Part(item.index, _input_piece(item, ""))

    def _item(self, data: dict[str, Any], kind: str) -> _Item:
        """The item an event belongs to (opened here if its ``added`` never came)."""
        position = int(data.get("output_index") or 0)
        item = self._items.get(position)
        if item is None:
            item = self._items[position] = _Item(kind, {"type": kind, "id": data.get("item_id")})
        return item

    def _new_index(self) -> int:
        self._next_index += 1
        return self._next_index - 1

    def _text(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        delta = str(data.get("delta") or "")
        item = self._item(data, "message")
        part = int(data.get("content_index") or 0)
        if part not in item.texts:
            item.texts[part] = self._new_index()
        if data.get("type") == "response.refusal.delta":
            self._refusal.append(delta)
        if delta:
            yield Part(item.texts[part], MessageDelta(delta))

    def _summary(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        delta = str(data.get("delta") or "")
        item = self._item(data, "reasoning")
        part = int(data.get("summary_index") or data.get("content_index") or 0)
        if item.index is None:
            item.index = self._new_index()
        elif part not in item.texts:
            delta = "\n\n" + delta  # the next summary part: a paragraph of its own
        item.texts.setdefault(part, item.index)
        if delta:
            yield Part(item.index, ReasoningDelta(delta))

    def _arguments(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        item = self._item(data, "function_call")
        delta = str(data.get("delta") or "")
        item.arguments.append(delta)
        if item.index is None:  # its ``added`` never came
            item.index = self._new_index()
        if delta:
            yield Part(item.index, _input_piece(item, delta))

    def _done(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        position = int(data.get("output_index") or 0)
        item = self._items.pop(position, None)
        raw = data.get("item")
        raw = dict(raw) if isinstance(raw, dict) else {}
        if item is None:
            item = _Item(str(raw.get("type")), raw)
        item.raw, item.done = raw or item.raw, bool(raw)
        if item.type not in ("message", "reasoning", "function_call"):
            self.unknown_events.append(data)  # shown, never sent back
            return
        yield from self._close(item)

    def _close(self, item: _Item) -> Iterator[StreamEvent]:
        """The blocks of a finished item (or of one the response ended inside)."""
        if item.type == "message":
            for part in sorted(item.texts):
                yield Flush(item.texts[part], {"api": API, "item_id": item.raw.get("id")})
        elif item.type == "reasoning":
            if item.index is None:
                item.index = self._new_index()
                yield Part(item.index, ReasoningDelta(""))  # no summary: still sent back
            # an item the response ended inside is shown, not sent back (it has no content)
            metadata = {"api": API, "raw_item": item.raw} if item.done else {"api": API}
            yield Flush(item.index, metadata)
        else:
            self._calls += 1
            index = self._new_index() if item.index is None else item.index
            yield Part(index, _tool_call(item))
            yield Flush(index, {"api": API, "item_id": item.raw.get("id")})

    # ------------------------------------------------------------------ the end

    def _completed(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        response = data.get("response")
        response = response if isinstance(response, dict) else {}
        for position in sorted(self._items):  # items the response ended inside
            yield from self._close(self._items.pop(position))
        self.model = str(response.get("model") or self.model or "") or None
        self.finished = True
        yield self._finished(response)

    def _finished(self, response: dict[str, Any]) -> Finished:
        details: dict[str, Any] = {}
        incomplete = response.get("incomplete_details")
        reason: FinishReason = "tool_use" if self._calls else "end_turn"
        if response.get("status") == "incomplete" or isinstance(incomplete, dict):
            cause = str((incomplete or {}).get("reason") or "")
            reason = _INCOMPLETE.get(cause, "other")
            details["incomplete_details"] = incomplete
            if reason == "refusal":
                details["explanation"] = f"The response was cut off ({cause})."
        if self._refusal:
            reason = "refusal"
            details["refusal"] = "".join(self._refusal)
        if self.unknown_events:
            details["unknown_events"] = self.unknown_events
        usage = responses_usage(response.get("usage"))
        return Finished(reason, usage, details, model=self.model)

    def _failed(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        response = data.get("response")
        error = response.get("error") if isinstance(response, dict) else None
        error = error if isinstance(error, dict) else {}
        raise coded_error(error.get("code"), error.get("message") or "the response failed")

    def _error(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        inner = data.get("error")
        source = inner if isinstance(inner, dict) else data
        raise coded_error(source.get("code") or source.get("type"), source.get("message"))


_HANDLERS = {
    "response.created": ResponsesAdapter._started,
    "response.in_progress": ResponsesAdapter._started,
    "response.output_item.added": ResponsesAdapter._added,
    "response.output_text.delta": ResponsesAdapter._text,
    "response.refusal.delta": ResponsesAdapter._text,
    "response.reasoning_summary_text.delta": ResponsesAdapter._summary,
    "response.reasoning_text.delta": ResponsesAdapter._summary,
    "response.function_call_arguments.delta": ResponsesAdapter._arguments,
    "response.output_item.done": ResponsesAdapter._done,
    "response.completed": ResponsesAdapter._completed,
    "response.incomplete": ResponsesAdapter._completed,
    "response.failed": ResponsesAdapter._failed,
    "error": ResponsesAdapter._error,
}


def _input_piece(item: _Item, text: str) -> ToolInputDelta:
    return ToolInputDelta(text, str(item.raw.get("call_id") or ""), str(item.raw.get("name") or ""))


def _tool_call(item: _Item) -> ToolCall:
    done = item.raw.get("arguments")
    text = done if isinstance(done, str) else "".join(item.arguments)
    call_id, name = str(item.raw.get("call_id") or ""), str(item.raw.get("name") or "")
    if not text.strip():
        return ToolCall(call_id, name, {})
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        error = f"invalid JSON ({exc.msg} at character {exc.pos})"
        return ToolCall(call_id, name, {}, text, error)
    if not isinstance(value, dict):
        return ToolCall(
            call_id, name, {}, text, f"expected a JSON object, got {type(value).__name__}"
        )
    return ToolCall(call_id, name, value)


def responses_usage(usage: Any) -> Usage | None:
    """A Responses (or Chat Completions) usage in Anthropic semantics: the input without the
    tokens read from or written to the cache; None when the server sent none."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    total = _int(usage.get("input_tokens", usage.get("prompt_tokens")))
    cached, written = _int(details.get("cached_tokens")), _int(details.get("cache_write_tokens"))
    output = _int(usage.get("output_tokens", usage.get("completion_tokens")))
    return Usage(max(0, total - cached - written), output, cached, written)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


# ---------------------------------------------------------------------------- --stream off


def response_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The raw stream events of ``response`` (the JSON body of a non-streaming request)."""
    output = response.get("output") or []
    yield {"type": "response.created", "response": {**response, "output": []}}
    for position, item in enumerate(output):
        yield {"type": "response.output_item.added", "output_index": position, "item": item}
        yield from _item_deltas(position, item)
        yield {"type": "response.output_item.done", "output_index": position, "item": item}
    status = response.get("status")
    if status == "failed":
        yield {"type": "response.failed", "response": response}
    elif status == "incomplete":
        yield {"type": "response.incomplete", "response": response}
    else:
        yield {"type": "response.completed", "response": response}


def _item_deltas(position: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    where = {"output_index": position, "item_id": item.get("id")}
    kind = item.get("type")
    if kind == "message":
        for number, part in enumerate(item.get("content") or []):
            if part.get("type") == "refusal":
                delta = {"type": "response.refusal.delta", "delta": part.get("refusal", "")}
            else:
                delta = {"type": "response.output_text.delta", "delta": part.get("text", "")}
            yield {**delta, **where, "content_index": number}
    elif kind == "reasoning":
        for number, part in enumerate(item.get("summary") or []):
            text = part.get("text", "")
            event = "response.reasoning_summary_text.delta"
            yield {"type": event, "delta": text, **where, "summary_index": number}
