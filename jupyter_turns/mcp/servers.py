"""McpServers: the kernel's MCP servers by name, shared by all its threads.

Servers come from ``ChatMagics.mcp_servers`` (``%config`` or ``ipython_config.py``, followed at
each cell: entries added or changed there are configured, entries taken out are removed),
from ``%chat mcp add`` / ``remove``, and from ``%chat mcp start NAME`` for a server a restored
thread holds (a notebook's server is never started without the user's word in this kernel
session, whatever the file or a grant says). None starts before a turn uses it: :meth:`prepare`
starts them (together), lists their tools and gives them to the thread; a server that stopped
since is started again, one that cannot start is a notice (its last known tools are still
offered, so a call gives the model the reason). :meth:`close_all` runs at kernel shutdown.

Nothing here imports the ``mcp`` SDK until a server is used; without it, a configured server
is a notice that says how to install it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import McpServerError
from ..record.mcp_spec import ServerSpec, parse_servers

if TYPE_CHECKING:
    from ..engine.chat import Chat
    from ..tools.registry import Tool
    from .connection import Connection

__all__ = ["INSTALL", "McpServers", "McpThread", "require_sdk"]

INSTALL = "pip install 'jupyter_turns[mcp]'"


def require_sdk() -> None:
    """Raise McpServerError saying how to install the SDK when it is missing."""
    try:
        import anthropic.lib.tools.mcp  # noqa: F401  (it needs mcp too)
        import jsonschema  # noqa: F401
        import mcp  # noqa: F401
    except ImportError as exc:
        raise McpServerError(
            f"MCP servers need the mcp package, which is not installed here ({exc.name}): "
            f"{INSTALL}, then restart the kernel"
        ) from None


class McpThread(Protocol):
    """What the servers need of a thread (the kernel's :class:`~jupyter_turns.kernel.threads.
    Thread` has it): its name for notices, the servers it holds (saved with its settings, so
    rewritten here), what an unsigned copy asked for, and its chat to give the tools to."""

    mcp_servers: dict[str, dict[str, Any]]

    @property
    def name(self) -> str: ...

    @property
    def withheld(self) -> dict[str, Any]: ...

    @property
    def chat(self) -> Chat: ...


class McpServers:
    def __init__(self) -> None:
        self.specs: dict[str, ServerSpec] = {}
        self.connections: dict[str, Connection] = {}
        self._configured: dict[str, ServerSpec] = {}  # ChatMagics.mcp_servers as last read
        self._hooked = False  # closed at kernel shutdown

    # ------------------------------------------------------------------ configuration

    async def follow(self, configured: Mapping[str, Any]) -> None:
        """Apply changes of ``ChatMagics.mcp_servers`` since it was last read."""
        specs = parse_servers(configured, "ChatMagics.mcp_servers")
        for name, spec in specs.items():
            if self._configured.get(name) != spec:
                await self.add(name, spec)
        for name in set(self._configured) - set(specs):
            if self.specs.get(name) == self._configured[name]:
                await self.remove(name)
        self._configured = specs

    async def add(self, name: str, spec: ServerSpec) -> bool:
        """Configure ``name`` (replacing a different spec: its server is closed); whether a
        running server was closed."""
        if self.specs.get(name) == spec:
            return False
        closed = await self.remove(name)
        self.specs[name] = spec
        return closed

    async def remove(self, name: str) -> bool:
        """Forget ``name`` and close its server; whether one was running."""
        self.specs.pop(name, None)
        connection = self.connections.pop(name, None)
        if connection is None:
            return False
        from .connection import ServerState

        running = connection.state in (ServerState.RUNNING, ServerState.STARTING)
        await connection.close()
        return running

    def connection(self, name: str) -> Connection | None:
        """The server's connection (made on first use), or None when it is not configured."""
        spec = self.specs.get(name)
        if spec is None:
            return None
        connection = self.connections.get(name)
        if connection is None:
            from .connection import Connection

            connection = self.connections[name] = Connection(name, spec)
            if not self._hooked:  # before the first server can start
                from .shutdown import close_at_kernel_shutdown

                self._hooked = close_at_kernel_shutdown(self)
        return connection

    # ------------------------------------------------------------------ a turn

    async def prepare(self, thread: McpThread, configured: Mapping[str, Any]) -> list[str]:
        """Before a turn: give ``thread`` every configured server's tools; the notices to show.

        The thread's own saved servers that this kernel lacks (restored from a notebook) are
        not started: a notice names each and the ``%chat mcp start NAME`` that starts it. The
        thread then records the servers it was offered, and keeps the restored ones not yet
        started (its settings, saved in the notebook).
        """
        await self.follow(configured)
        notes: list[str] = []
        waiting = {n: s for n, s in thread.mcp_servers.items() if n not in self.specs}
        for name, saved in waiting.items():
            spec = ServerSpec.model_validate(saved)
            if spec.incomplete:
                notes.append(
                    f"Thread {thread.name!r} used the MCP server '{name}' ({spec.describe()}), "
                    "whose URL was saved without its query string: configure it again with "
                    f"%chat mcp add {name} URL"
                )
                continue
            notes.append(
                f"MCP server '{name}' ({spec.describe()}) of thread {thread.name!r} is not "
                f"started: it was restored from the notebook. %chat mcp start {name} starts "
                "it, once you have read what it runs"
            )
        for name, saved in thread.withheld.get("mcp_servers", {}).items():
            if name not in self.specs:  # asked for by a copy of the settings that is unsigned
                spec = ServerSpec.model_validate(saved)
                notes.append(
                    f"Thread {thread.name!r} used the MCP server '{name}' ({spec.describe()}), "
                    f"which is not configured here: %chat mcp add {name} ..., or "
                    "%chat trust --apply if you trust the notebook"
                )
        tools, problems = await self.tools()
        thread.chat.tools.update({tool.name: tool for tool in tools})
        offered = {name: spec.saved() for name, spec in self.specs.items()}
        thread.mcp_servers = {**waiting, **offered}
        return [*notes, *problems]

    def restored(self, threads: Iterable[McpThread]) -> dict[str, ServerSpec]:
        """The servers restored threads hold that this kernel has not configured (the first
        thread's spec of a name wins): what ``%chat mcp start`` may start."""
        found: dict[str, ServerSpec] = {}
        for thread in threads:
            for name, saved in thread.mcp_servers.items():
                if name not in self.specs and name not in found:
                    found[name] = ServerSpec.model_validate(saved)
        return found

    async def tools(self) -> tuple[list[Tool], list[str]]:
        """Every configured server's tools (servers started as needed, together), and a
        notice for each server or tool that could not be offered."""
        if not self.specs:
            return [], []
        try:
            require_sdk()
        except McpServerError as exc:
            return [], [f"{exc} (configured: {', '.join(sorted(self.specs))})"]
        listed = await asyncio.gather(*(self._listed(name) for name in sorted(self.specs)))
        tools: list[Tool] = []
        notes: list[str] = []
        for server_tools, server_notes in listed:
            tools.extend(server_tools)
            notes.extend(server_notes)
        return tools, notes

    async def _listed(self, name: str) -> tuple[list[Tool], list[str]]:
        from .connection import ServerState
        from .mcp_tool import server_tools

        connection = self.connection(name)
        assert connection is not None
        notes: list[str] = []
        was_running = connection.state is ServerState.RUNNING
        try:
            try:
                infos = await connection.list_tools()
            except McpServerError as exc:
                if not (was_running and connection.state is ServerState.FAILED):
                    raise
                notes.append(f"MCP server '{name}' had stopped ({exc}); starting it again")
                infos = await connection.list_tools()
        except McpServerError as exc:
            infos = connection.tools  # as last listed: a call then tells the model why
            offered = "its tools as last listed are offered" if infos else "no tools offered"
            notes.append(f"MCP server '{name}': {exc} ({offered})")
        made, problems = server_tools(name, infos, self.connection)
        return list(made), [*notes, *problems]

    # ------------------------------------------------------------------ shutdown

    async def close_all(self) -> None:
        """Close every server (the kernel shuts down); their configuration stays."""
        connections = list(self.connections.values())
        self.connections.clear()
        await asyncio.gather(*(c.close() for c in connections))
