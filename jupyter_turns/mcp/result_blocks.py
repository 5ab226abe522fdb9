"""An MCP tool result as the same content a local tool answers with: text and image blocks.

Each content item goes through the Anthropic SDK's own converter
(``anthropic.lib.tools.mcp.mcp_content``: text, images of the four types the API takes,
embedded text, image and PDF resources); its blocks become a :class:`ToolResult`'s text and
images, so images reach the model as image blocks inside the tool result, at most five and
scaled down like any tool's. What the converter refuses (audio, a resource link, an image type
the API does not take) is named in the text instead. A result with no content but structured
content is that JSON, as the SDK's tool runner does. An ``isError`` result is an error result
for the model, through :class:`~jupyter_turns.tools.results.ToolFailed`.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.lib.tools.mcp import UnsupportedMCPValueError, mcp_content
from mcp.types import CallToolResult, ContentBlock, EmbeddedResource, ResourceLink

from ..model.content import ImageData
from ..model.images import image_from_base64
from ..tools.results import ToolFailed, ToolResult

__all__ = ["progress_line", "tool_result"]


def tool_result(result: CallToolResult) -> ToolResult:
    """The text and images of ``result``; raises ToolFailed for an ``isError`` result."""
    texts: list[str] = []
    images: list[ImageData] = []
    for item in result.content:
        texts.extend(_item(item, images))
    if not result.content and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(t for t in texts if t)
    if result.is_error:
        raise ToolFailed(text or "The MCP tool reported an error and said nothing more.")
    return ToolResult(text or ("" if images else "(no output)"), images)


def _item(item: ContentBlock, images: list[ImageData]) -> list[str]:
    """One content item: its text, or a note; an image is added to ``images``."""
    try:
        block: dict[str, Any] = dict(mcp_content(item))
    except UnsupportedMCPValueError as exc:
        if isinstance(item, ResourceLink):
            title = f" ({item.title or item.name})" if (item.title or item.name) else ""
            return [f"[resource link: {item.uri}{title}]"]
        return [f"[not sent to the model: {exc}]"]
    source: dict[str, Any] = dict(block.get("source") or {})
    uri = str(item.resource.uri) if isinstance(item, EmbeddedResource) else None
    match block["type"]:
        case "text":
            return [str(block["text"])]
        case "image":
            label = f"resource {uri}" if uri else f"{len(images) + 1} from the MCP server"
            image = image_from_base64(str(source["data"]), str(source["media_type"]), label)
            if image is None:
                return [f"[an image that could not be read: {source['media_type']}]"]
            images.append(image)
            return []
        case "document" if source.get("type") == "text":
            return [f"[resource {uri}]\n{source['data']}" if uri else str(source["data"])]
        case _:
            # a PDF: a tool result here carries text and images only
            return [f"[resource {uri}: {source.get('media_type', block['type'])}, not sent]"]


def progress_line(done: float, total: float | None, message: str | None) -> str:
    """An MCP progress notification as a line of the tool card: ``step 2 (2/5)``."""
    amount = f"{done:g}/{total:g}" if total else f"{done:g}"
    return f"{message} ({amount})" if message else f"progress {amount}"
