"""The non-streaming twin of a recorded stream: the same message as one JSON body.

Accumulates the raw SSE events the way the API documents them (independently of the package's
own adapter), so a test can serve the twin to a non-streaming request and compare the events.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["message_from_sse"]


def _events(body: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in body.decode("utf-8").splitlines()
        if line.startswith("data: ")
    ]


def message_from_sse(body: bytes) -> dict[str, Any]:
    """The message a stream built: content blocks with their text, thinking, signature,
    input and citations, the stop reason and the final usage."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for event in _events(body):
        kind = event["type"]
        if kind == "message_start":
            message = dict(event["message"])
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = block.get("signature", "") + delta["signature"]
            elif delta["type"] == "input_json_delta":
                inputs[event["index"]] = inputs.get(event["index"], "") + delta["partial_json"]
            elif delta["type"] == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
        elif kind == "message_delta":
            message.update({k: v for k, v in event["delta"].items() if v is not None})
            message["usage"] = {**message.get("usage", {}), **event.get("usage", {})}
    for index, text in inputs.items():
        blocks[index]["input"] = json.loads(text) if text.strip() else {}
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message
