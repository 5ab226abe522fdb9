"""Hand-made OpenAI Responses API bodies for the local test server, and its recordings.

The recorded exchanges in ``tests/fixtures/openai`` (:func:`openai_recording`) cover the happy
paths; a test that needs a particular stream builds it here. The events mirror the recordings:
``response.created`` / ``in_progress``, per output item ``response.output_item.added``, its
deltas and ``response.output_item.done``, then ``response.completed`` (or ``incomplete``) with
the whole response and its usage; each event has its ``sequence_number``.

:func:`for_responses` points a ``Reply`` (built by ``tests.support.anthropic_replies``, whose
transport faults are API-neutral) at ``POST /v1/responses``; :func:`openai_error` is an
OpenAI-shaped error reply (``{"error": {"message", "type", "param", "code"}}``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .anthropic_replies import Exchange, Reply, load_recording

__all__ = [
    "MODEL",
    "Call",
    "Reasoning",
    "Text",
    "for_responses",
    "openai_error",
    "openai_recording",
    "responses_body",
    "responses_event",
]

MODEL = "gpt-5-mini-2025-08-07"
RESPONSES = ("POST", "/v1/responses")
_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai"
_ids = itertools.count(1)


def openai_recording(name: str) -> list[Exchange]:
    """The exchanges of ``tests/fixtures/openai/<name>``."""
    return load_recording(_FIXTURES / name)


def for_responses(reply: Reply) -> Reply:
    """``reply`` as the answer to ``POST /v1/responses``."""
    return replace(reply, expect=RESPONSES)


def openai_error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    error_type: str = "invalid_request_error",
    retry_after: float | None = None,
    retry_after_ms: int | None = None,
) -> Reply:
    """An error as the OpenAI API sends it, with its retry hints."""
    headers = []
    if retry_after is not None:
        headers.append(("retry-after", f"{retry_after:g}"))
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", str(retry_after_ms)))
    error = {"message": message, "type": error_type, "param": None, "code": code}
    return for_responses(Reply.json(status, {"error": error}, headers=headers))


def responses_event(data: dict[str, Any]) -> str:
    """One SSE event: ``event: <type>`` then ``data: <compact json>`` and a blank line."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {data['type']}\ndata: {payload}\n\n"


@dataclass(frozen=True)
class Text:
    chunks: Sequence[str]
    refusal: bool = False  # a refusal part instead of output_text


@dataclass(frozen=True)
class Reasoning:
    summary: Sequence[str] = ()  # the summary's deltas (one summary part)
    encrypted: str = "gAAAAB-encrypted=="


@dataclass(frozen=True)
class Call:
    name: str
    arguments: Sequence[str]  # the argument deltas (joined: the JSON text)
    call_id: str = field(default_factory=lambda: f"call_test{next(_ids)}")


Output = Text | Reasoning | Call


def responses_body(
    outputs: Sequence[Output],
    *,
    status: str = "completed",
    incomplete: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = MODEL,
    end: bool = True,
) -> str:
    """A whole Responses stream for ``outputs``; ``end=False`` leaves out the final event."""
    events: list[dict[str, Any]] = []
    response: dict[str, Any] = {"id": "resp_test", "object": "response", "model": model}
    events.append({"type": "response.created", "response": {**response, "status": "in_progress"}})
    items = []
    for position, output in enumerate(outputs):
        item, deltas = _item(position, output)
        added = {**item, "status": "in_progress"} if item["type"] != "reasoning" else item
        events.append(
            {"type": "response.output_item.added", "output_index": position, "item": added}
        )
        events.extend(deltas)
        events.append({"type": "response.output_item.done", "output_index": position, "item": item})
        items.append(item)
    final = {
        **response,
        "status": status,
        "output": items,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "usage": usage,
    }
    if end:
        events.append({"type": f"response.{status}", "response": final})
    return "".join(
        responses_event({**event, "sequence_number": number}) for number, event in enumerate(events)
    )


def _item(position: int, output: Output) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    where = {"output_index": position, "item_id": f"item_{position}"}
    if isinstance(output, Text):
        kind = "refusal" if output.refusal else "output_text"
        event = "response.refusal.delta" if output.refusal else "response.output_text.delta"
        deltas = [{"type": event, **where, "content_index": 0, "delta": c} for c in output.chunks]
        text = "".join(output.chunks)
        part = {"type": kind, kind if output.refusal else "text": text}
        item = {"id": f"item_{position}", "type": "message", "role": "assistant", "content": [part]}
        return {**item, "status": "completed"}, deltas
    if isinstance(output, Reasoning):
        event = "response.reasoning_summary_text.delta"
        deltas = [{"type": event, **where, "summary_index": 0, "delta": c} for c in output.summary]
        summary = (
            [{"type": "summary_text", "text": "".join(output.summary)}] if output.summary else []
        )
        item = {"id": f"item_{position}", "type": "reasoning", "summary": summary}
        return {**item, "encrypted_content": output.encrypted}, deltas
    event = "response.function_call_arguments.delta"
    deltas = [{"type": event, **where, "delta": c} for c in output.arguments]
    item = {
        "id": f"item_{position}",
        "type": "function_call",
        "call_id": output.call_id,
        "name": output.name,
        "arguments": "".join(output.arguments),
        "status": "completed",
    }
    return item, deltas
