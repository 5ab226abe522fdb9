"""The notebook's tools as an MCP server shows them, and each result as MCP content.

:func:`mcp_tool` describes a :class:`~jupyter_turns.tools.registry.Tool` with its JSON schema
and annotations that tell the truth (:data:`HINTS`: the built-ins' by name; a notebook's own
``@tool`` gets none, so a client assumes the worst, as MCP says it should). :func:`call_result`
turns the one ``tool_call_response`` a call ends in (already redacted by the executor) into a
``CallToolResult``: its text, its images, ``isError``. :func:`client_label` names the client
from the ``clientInfo`` of its ``initialize`` (plain text, capped: a client may say anything).
"""

from __future__ import annotations

import re
from typing import Any

import mcp_types as types

from ..model.events import ToolCallResponse
from ..tools.registry import Tool

__all__ = ["CLIENT_NAMES", "HINTS", "call_result", "client_label", "mcp_tool"]

_READ = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def _changes(*, destructive: bool, open_world: bool = False) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=False,
        open_world_hint=open_world,
    )


# What each built-in does to the notebook. Reading never changes anything; inserting and moving
# a cell lose nothing (undo takes them back); editing replaces a cell's text, deleting removes a
# cell, and running code may do anything the code does (python too, and it reaches whatever the
# code reaches: an open world).
HINTS: dict[str, types.ToolAnnotations] = {
    "notebook_cells": _READ,
    "cell_output": _READ,
    "variables": _READ,
    "inspect": _READ,
    "insert_cell": _changes(destructive=False, open_world=True),  # run=True runs its code
    "move_cell": _changes(destructive=False),
    "edit_cell": _changes(destructive=True, open_world=True),
    "delete_cell": _changes(destructive=True),
    "run_cell": _changes(destructive=True, open_world=True),
    "python": _changes(destructive=True, open_world=True),
}

# How the clients people use name themselves in ``clientInfo.name``, and how a card names them
CLIENT_NAMES = {
    "claude-code": "Claude Code",
    "codex-mcp-client": "Codex",
    "codex": "Codex",
    "cursor-vscode": "Cursor",
    "cursor": "Cursor",
    "opencode": "opencode",
    "mcp": "an MCP client",  # the Python SDK's default
}
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]+")
MAX_CLIENT_CHARS = 60


def mcp_tool(tool: Tool) -> types.Tool:
    """``tool`` as ``tools/list`` shows it; annotations only for the kernel's own tools."""
    hints = HINTS.get(tool.name) if tool.builtin else None
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.schema or {"type": "object", "properties": {}},
        annotations=hints,
    )


def call_result(response: ToolCallResponse) -> types.CallToolResult:
    """What the client reads of a call: the response's text and images (the executor redacted
    the text; the images are what the record holds)."""
    content: list[Any] = [types.TextContent(type="text", text=response.content)]
    content.extend(
        types.ImageContent(type="image", data=image.data, mime_type=image.media_type)
        for image in response.images
    )
    return types.CallToolResult(content=content, is_error=response.is_error)


def client_label(info: types.Implementation | None, fallback: str = "an MCP client") -> str:
    """The name a card gives the client: a known client's own name, else what it calls itself
    (one line, at most ``MAX_CLIENT_CHARS`` characters), else ``fallback``."""
    if info is None:
        return fallback
    raw = (info.title or info.name or "").strip()
    known = CLIENT_NAMES.get((info.name or "").strip().lower())
    if known:
        return known
    text = _UNPRINTABLE.sub(" ", raw).strip()[:MAX_CLIENT_CHARS].strip()
    return text or fallback
