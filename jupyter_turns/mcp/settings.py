"""``ChatMagics.mcp_servers``: the MCP servers configured with ``%config`` or in
``ipython_config.py``, checked when they are set (a wrong entry fails there, not in a chat).

A mixin of ``ChatMagics``, so the setting is ``ChatMagics.mcp_servers``::

    %config ChatMagics.mcp_servers = {
        "files": {"command": ["python", "files_server.py"]},
        "tracker": {"url": "https://tracker.example/mcp",
                    "headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"}},
    }
"""

from __future__ import annotations

from typing import Any

from traitlets import Dict, TraitError, validate
from traitlets.config import Configurable

__all__ = ["McpSettings"]


class McpSettings(Configurable):
    mcp_servers = Dict(
        help="MCP servers whose tools every thread is offered, by name: {'command': [...]} "
        "(stdio) or {'url': ...} (streamable HTTP), with optional 'env' (names of environment "
        "variables passed on), 'headers' (header -> environment variable name, or "
        "'Bearer ${VAR}'), 'run' (ask, unattended, edit, skip) and 'timeout' (seconds).",
    ).tag(config=True)

    @validate("mcp_servers")
    def _check_mcp_servers(self, proposal: Any) -> Any:
        from ..record.mcp_spec import parse_servers  # pydantic: not at %load_ext

        try:
            parse_servers(proposal["value"], "ChatMagics.mcp_servers")
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]
