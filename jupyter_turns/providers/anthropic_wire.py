"""The Anthropic wire format: a conversation's events as Messages API ``messages``.

The conversation (``model/``) is provider-neutral: it keeps events and their send-valid
invariant (:class:`jupyter_turns.model.conversation.Conversation`). This module is the one place
that maps those events to the Anthropic API's roles and content blocks; the provider calls it
for each request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model.content import ImageData, labeled
from ..model.events import API_KINDS, ConversationEvent

__all__ = ["anthropic_messages", "api_blocks"]


def anthropic_messages(events: Iterable[ConversationEvent]) -> list[dict[str, Any]]:
    """Messages for the Anthropic API: blocks in event order, same-role turns merged.

    Assistant blocks go back exactly as received (thinking with its signature, opaque blocks
    raw, tool_use with its extra fields); a tool_use's results open the next user message.
    Reasoning without a signature (a stopped or offline one) is not sent: the API would
    reject it. A sub-agent's events (``parent`` set) are never sent.
    """
    messages: list[dict[str, Any]] = []
    for event in events:
        if event.kind not in API_KINDS or event.parent is not None:
            continue
        blocks = _anthropic_blocks(event)
        if not blocks:
            continue
        role = "user" if event.kind in ("chat_request", "tool_call_response") else "assistant"
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return messages


def api_blocks(text: str, images: list[ImageData]) -> list[dict[str, Any]]:
    """A text and its images as API content blocks (the text first, when there is any)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.extend(_image_block(image) for image in images)
    return blocks


def _image_block(image: ImageData) -> dict[str, Any]:
    source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "image", "source": source}


def _anthropic_blocks(event: ConversationEvent) -> list[dict[str, Any]]:
    """The API content blocks of one event: a request with its attachments (labeled data and
    their images), a tool result with its images; every other kind is one block or none."""
    match event.kind:
        case "chat_request":
            blocks = [{"type": "text", "text": event.content}] if event.content else []
            for attachment in event.attachments:
                text = labeled(attachment.text, f"{attachment.source} {attachment.label}")
                blocks.extend(api_blocks(text, attachment.images))
            return blocks
        case "tool_call_response":
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": event.call_id}
            result["content"] = (
                api_blocks(event.content, event.images) if event.images else event.content
            )
            result["is_error"] = event.is_error
            return [result]
    block = _anthropic_block(event)
    return [block] if block is not None else []


def _anthropic_block(event: ConversationEvent) -> dict[str, Any] | None:
    match event.kind:
        case "message":
            if not event.content:
                return None
            block: dict[str, Any] = {"type": "text", "text": event.content}
            if event.metadata.get("citations"):
                block["citations"] = event.metadata["citations"]
            return block
        case "reasoning":
            signature = event.metadata.get("signature")
            if not signature:
                return None
            return {"type": "thinking", "thinking": event.content, "signature": signature}
        case "block":
            raw = event.metadata.get("raw_block")
            return dict(raw) if isinstance(raw, dict) else None
        case "tool_call_request":
            raw = event.metadata.get("raw_block")
            tool_use = dict(raw) if isinstance(raw, dict) else {}
            tool_use.update(type="tool_use", id=event.call_id, name=event.name)
            tool_use["input"] = event.arguments
            return tool_use
        case _:
            return None
