"""The OpenAI Responses wire format: a conversation's events as the API's ``input`` items.

The one place conversation events become Responses ``input``. A user's request is a user
message (its text, then each attachment as labeled data with its images as ``input_image`` data
URLs); the assistant's text goes back as an output message (with the item id it came with); a
tool call as a ``function_call`` item and its result as ``function_call_output`` (text, or text
and ``input_image`` parts when the result holds images: the API takes both). Reasoning goes back
only when it is this API's own (``metadata["api"] == "openai-responses"``) and has its
encrypted content (nothing is stored server-side): its ``raw_item``, exactly as received.
Claude's signed thinking, reasoning a Chat Completions server showed, and opaque Anthropic
``block`` events are never sent here. A sub-agent's events (``parent`` set) are never sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..model.content import ImageData, labeled
from ..model.events import API_KINDS, ChatRequest, ConversationEvent, ToolCallResponse
from .base import continue_request

__all__ = ["API", "continued", "image_part", "responses_input"]

API = "openai-responses"  # metadata["api"] of what this API sent and may get back


def responses_input(events: Iterable[ConversationEvent]) -> list[dict[str, Any]]:
    """The ``input`` items of ``events``, in order."""
    items: list[dict[str, Any]] = []
    for event in events:
        if event.kind not in API_KINDS or event.parent is not None:
            continue
        item = _item(event)
        if item is None:
            continue
        if _same_message(items, item):  # parts of one output message, one event each
            items[-1]["content"].extend(item["content"])
        else:
            items.append(item)
    return items


def continued(items: list[dict[str, Any]], partial: str) -> None:
    """Ask the model to go on from ``partial``: the partial answer as the assistant's, then a
    user message quoting where it stopped (the Responses API has no prefill)."""
    items.append(_assistant_text(partial, None))
    items.append(_user([{"type": "input_text", "text": continue_request(partial)}]))


def image_part(image: ImageData) -> dict[str, Any]:
    """An image as an ``input_image`` content part (a base64 data URL)."""
    url = f"data:{image.media_type};base64,{image.data}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _item(event: ConversationEvent) -> dict[str, Any] | None:
    if isinstance(event, ChatRequest):
        return _request(event)
    if isinstance(event, ToolCallResponse):
        return _tool_output(event)
    match event.kind:
        case "message":
            if not event.content:
                return None
            own = event.metadata.get("api") == API
            return _assistant_text(event.content, event.metadata.get("item_id") if own else None)
        case "reasoning":
            raw = event.metadata.get("raw_item")
            if event.metadata.get("api") != API or not isinstance(raw, dict):
                return None
            # not stored (store: false): without its encrypted content the API cannot read it
            return dict(raw) if raw.get("encrypted_content") else None
        case "tool_call_request":
            arguments = json.dumps(event.arguments, ensure_ascii=False)
            call = {"type": "function_call", "call_id": event.call_id, "name": event.name}
            return {**call, "arguments": arguments}
    return None  # a block: opaque Anthropic content, never sent to this API


def _request(event: ChatRequest) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    if event.content:
        parts.append({"type": "input_text", "text": event.content})
    for attachment in event.attachments:
        text = labeled(attachment.text, f"{attachment.source} {attachment.label}")
        parts.append({"type": "input_text", "text": text})
        parts.extend(image_part(image) for image in attachment.images)
    return _user(parts) if parts else None


def _tool_output(event: ToolCallResponse) -> dict[str, Any]:
    text = event.content
    if event.is_error and not text.lower().startswith("error"):
        text = f"Error: {text}"  # the API has no error flag: the model reads it here
    output: str | list[dict[str, Any]] = text
    if event.images:
        output = [{"type": "input_text", "text": text}] if text else []
        output.extend(image_part(image) for image in event.images)
    return {"type": "function_call_output", "call_id": event.call_id, "output": output}


def _user(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": parts}


def _assistant_text(text: str, item_id: Any) -> dict[str, Any]:
    """The output message the API gave (its id, ``output_text`` parts) when it came from this
    API; otherwise (another provider's answer, a partial one) an assistant input message."""
    if not (isinstance(item_id, str) and item_id):
        return {"type": "message", "role": "assistant", "content": text}
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": [part],
    }


def _same_message(items: list[dict[str, Any]], item: dict[str, Any]) -> bool:
    if not items or "id" not in item:
        return False
    last = items[-1]
    return last.get("type") == "message" and last.get("id") == item["id"]
