"""MCP servers as tools: configured per kernel, started on first use, called like any tool.

::

 config.py      ServerSpec: a command (stdio) or a URL (streamable HTTP), env and header
                names (never values), run mode, timeout; what a thread saves of it
 servers.py     McpServers: the kernel's servers by name; prepare() gives a thread their tools
 connection.py  Connection: one server's client, held open by one task on the kernel's loop
 mcp_tool.py    McpTool (mcp__SERVER__TOOL): the server's schema, checked with jsonschema
 result_blocks.py  a CallToolResult as text and images (the Anthropic SDK's mcp_content)
 mcp_command.py %chat mcp list | add | remove | restart
 shutdown.py    closing the servers when the kernel shuts down

Only ``connection.py``, ``mcp_tool.py`` and ``result_blocks.py`` import the ``mcp`` SDK (an optional
extra: ``pip install 'jupyter_turns[mcp]'``); they are loaded when a server is first used.
See docs/architecture.md, "MCP servers as tools". Its names are imported when first read, as the
root package's are (jupyter_turns/__init__.py): ``%load_ext`` reads ``settings.py`` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazy_exports

if TYPE_CHECKING:
    from ..record.mcp_spec import ServerSpec
    from .servers import McpServers, require_sdk

_HOMES = {"ServerSpec": "..record.mcp_spec", "McpServers": ".servers", "require_sdk": ".servers"}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())


__all__ = ["McpServers", "ServerSpec", "require_sdk"]
