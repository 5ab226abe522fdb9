"""The Messages API's documented request limits, checked before a request is sent.

A request over a limit is refused by the API (413 ``request_too_large``, or a 400 per image)
after the whole body went over the wire; and since the thread keeps what made it too big, every
later request would fail the same way. Checked here instead, the error names what is too big:
the largest parts of the request (a tool's result, a request's attachment, an image) by size.

Limits (Anthropic's API documentation, vision and API overview pages): a request body of at
most 32 MB; at most 100 images per request; an image's base64 data at most 5 MB. (The pixel
limits, 8000 px and 2000 px once a request has more than 20 images, are kept by the image
reader, which scales every image to a long side of 1568 px.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import ProviderError

__all__ = ["MAX_IMAGES", "MAX_IMAGE_BYTES", "MAX_REQUEST_BYTES", "check_request"]

MAX_REQUEST_BYTES = 32 * 1000 * 1000
MAX_IMAGES = 100
MAX_IMAGE_BYTES = 5 * 1024 * 1024

_HINT = (
    " Nothing was sent. `%chat forget N` stops sending the thread's oldest N exchanges, "
    "`%chat compact` summarizes it, `%%chat --new` starts a new thread."
)


@dataclass(frozen=True, slots=True)
class _Part:
    what: str
    size: int


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _parts(messages: list[dict[str, Any]]) -> tuple[list[_Part], list[_Part]]:
    """Every content block of ``messages`` with what it is, and every image."""
    names: dict[str, str] = {}
    blocks: list[_Part] = []
    images: list[_Part] = []
    for number, message in enumerate(messages):
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
            if kind == "tool_result":
                call = str(block.get("tool_use_id"))
                what = f"the result of tool call `{names.get(call, '?')}` ({call})"
                inner = block.get("content")
                for item in inner if isinstance(inner, list) else []:
                    if isinstance(item, dict) and item.get("type") == "image":
                        images.append(_Part(f"an image in {what}", _image_bytes(item)))
            elif kind == "image":
                what = f"an image in message {number + 1} ({message.get('role')})"
                images.append(_Part(what, _image_bytes(block)))
            elif kind == "text":
                what = f"a text of {message.get('role')} message {number + 1}"
            else:
                what = f"a {kind} block of message {number + 1}"
            blocks.append(_Part(what, _size(block)))
    return blocks, images


def _image_bytes(block: dict[str, Any]) -> int:
    source = block.get("source")
    data = source.get("data") if isinstance(source, dict) else None
    return len(data) if isinstance(data, str) else 0


def check_request(params: dict[str, Any]) -> None:
    """Raise a ProviderError (``too_large``) naming what is too big, if anything is."""
    messages = params.get("messages") or []
    blocks, images = _parts(messages)
    problems: list[str] = []
    for image in images:
        if image.size > MAX_IMAGE_BYTES:
            problems.append(
                f"{image.what} is {_mb(image.size)} of base64 data, over the API's 5 MB per image"
            )
    if len(images) > MAX_IMAGES:
        problems.append(
            f"the request holds {len(images)} images, over the API's {MAX_IMAGES} per request"
        )
    total = _size(params)
    if total > MAX_REQUEST_BYTES:
        largest = sorted(blocks, key=lambda part: part.size, reverse=True)[:3]
        named = "; ".join(f"{part.what}: {_mb(part.size)}" for part in largest)
        problems.append(
            f"the request is {_mb(total)}, over the API's 32 MB limit; the largest parts: {named}"
        )
    if problems:
        raise ProviderError(
            "The request is too large to send: " + "; ".join(problems) + "." + _HINT,
            kind="too_large",
        )
