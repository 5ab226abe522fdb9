"""``%chat mcp``: list, add, remove, start and restart the kernel's MCP servers.

::

    %chat mcp list
    %chat mcp add NAME [--env VAR]... [--run MODE] [--timeout S] -- COMMAND [ARGS...]
    %chat mcp add NAME URL [--header 'NAME=VAR' | 'NAME=Bearer ${VAR}']... [--run MODE]
                           [--timeout S]
    %chat mcp remove NAME
    %chat mcp start NAME      a server a restored thread holds (never started without this)
    %chat mcp restart NAME

Each returns a coroutine: the ``cell_hooks`` transformer awaits ``%chat mcp`` lines, so closing
or starting a server runs on the kernel's loop, where its connection lives.
"""

from __future__ import annotations

import argparse
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from IPython.core.error import UsageError
from pydantic import ValidationError

from ..errors import McpServerError
from ..record.mcp_spec import ServerSpec, check_name, problem_text
from ..text import plural
from .servers import McpServers, McpThread, require_sdk

__all__ = ["USAGE", "mcp_command"]

USAGE = (
    "usage: %chat mcp list | add NAME [--env VAR] [--run MODE] [--timeout S] -- COMMAND "
    "[ARGS...] | add NAME URL [--header 'NAME=VAR'] [--run MODE] [--timeout S] | "
    "remove NAME | start NAME | restart NAME"
)


def mcp_command(
    servers: McpServers,
    configured: Mapping[str, Any],
    threads: Sequence[McpThread],
    args: list[str],
) -> Coroutine[Any, Any, None]:
    """The coroutine that runs ``%chat mcp ARGS`` on the kernel's ``servers``, after following
    ``configured`` (``ChatMagics.mcp_servers``); ``threads`` are the session's, the current one
    first (a restored server's spec is the first thread's). The words are checked first."""
    if not args or args[0] not in ("list", "add", "remove", "start", "restart"):
        raise UsageError(USAGE)
    action, rest = args[0], args[1:]
    if action == "add":
        name, spec = _parse_add(rest)
        return _add(servers, configured, name, spec)
    if action == "list":
        return _list(servers, configured, threads)
    if len(rest) != 1:
        raise UsageError(f"usage: %chat mcp {action} NAME")
    if action == "start":
        return _start(servers, configured, threads, rest[0])
    if action == "remove":
        return _remove(servers, configured, threads, rest[0])
    return _restart(servers, rest[0])


def _parse_add(words: list[str]) -> tuple[str, ServerSpec]:
    command: list[str] | None = None
    if "--" in words:
        cut = words.index("--")
        words, command = words[:cut], words[cut + 1 :]
        if not command:
            raise UsageError("%chat mcp add NAME -- COMMAND: the command is missing")
    parser = argparse.ArgumentParser(
        prog="%chat mcp add", add_help=False, exit_on_error=False, allow_abbrev=False
    )
    parser.add_argument("name")
    parser.add_argument("url", nargs="?")
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--run", choices=("ask", "unattended", "edit", "skip"))
    parser.add_argument("--timeout", type=float)
    try:
        options = parser.parse_args(words)
        check_name(options.name)
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"%chat mcp add: {exc}\n{USAGE}") from None
    except SystemExit:
        raise UsageError(USAGE) from None
    if (command is None) == (options.url is None):
        raise UsageError(f"%chat mcp add: give a URL or `-- COMMAND`, not both\n{USAGE}")
    headers = {}
    for item in options.header:
        header, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--header {item!r}: write NAME=VAR, e.g. 'X-Api-Key=MY_KEY'")
        headers[header.strip()] = value.strip()
    raw: dict[str, Any] = {"command": command, "url": options.url, "env": options.env}
    raw.update(headers=headers, run=options.run)
    if options.timeout is not None:
        raw["timeout"] = options.timeout
    try:
        return options.name, ServerSpec.model_validate(raw)
    except ValidationError as exc:
        raise UsageError(f"%chat mcp add {options.name}: {problem_text(exc)}") from None


async def _add(
    servers: McpServers, configured: Mapping[str, Any], name: str, spec: ServerSpec
) -> None:
    try:
        require_sdk()
    except McpServerError as exc:
        raise UsageError(str(exc)) from None
    await servers.follow(configured)
    if servers.specs.get(name) == spec:
        print(f"MCP server '{name}' is already configured like that ({spec.describe()}).")
        return
    replaced = name in servers.specs
    closed = await servers.add(name, spec)
    verb = "Replaced" if replaced else "Added"
    old = " and closed the old one" if closed else ""
    print(
        f"{verb} MCP server '{name}' ({spec.describe()}){old}. It starts when a chat first "
        f"uses it; its tools are named mcp__{name}__TOOL."
    )


async def _list(
    servers: McpServers, configured: Mapping[str, Any], threads: Sequence[McpThread]
) -> None:
    await servers.follow(configured)
    restored = servers.restored(threads)
    if not servers.specs and not restored:
        print("No MCP servers: %chat mcp add NAME -- COMMAND [ARGS...] or %chat mcp add NAME URL")
        return
    for name, spec in sorted(servers.specs.items()):
        connection = servers.connections.get(name)
        status = connection.status() if connection is not None else "not started"
        print(f"{name}: {spec.describe()} · {status}")
    for name, spec in sorted(restored.items()):
        print(f"{name}: {spec.describe()} · restored, not started: %chat mcp start {name}")


async def _start(
    servers: McpServers, configured: Mapping[str, Any], threads: Sequence[McpThread], name: str
) -> None:
    """Start a server now: a restored one is configured first (the user's confirmation)."""
    await servers.follow(configured)
    spec = servers.specs.get(name) or servers.restored(threads).get(name)
    if spec is None:
        raise UsageError(f"no MCP server named {name!r}; see %chat mcp list")
    if spec.incomplete:
        raise UsageError(
            f"MCP server '{name}' ({spec.describe()}) was saved without its URL's query "
            f"string: configure it again with %chat mcp add {name} URL"
        )
    try:
        require_sdk()
    except McpServerError as exc:
        raise UsageError(str(exc)) from None
    await servers.add(name, spec)
    connection = servers.connection(name)
    assert connection is not None
    try:
        tools = await connection.list_tools()
    except McpServerError as exc:
        raise UsageError(f"MCP server '{name}': {exc}") from None
    names = ", ".join(tool.name for tool in tools)
    print(
        f"Started MCP server '{name}' ({spec.describe()}): {plural(len(tools), 'tool')} "
        f"({names or 'none'})."
    )


async def _remove(
    servers: McpServers, configured: Mapping[str, Any], threads: Sequence[McpThread], name: str
) -> None:
    await servers.follow(configured)
    if name not in servers.specs:
        raise UsageError(f"no MCP server named {name!r}; see %chat mcp list")
    closed = await servers.remove(name)
    for thread in threads:  # or the next turn would configure it again
        thread.mcp_servers.pop(name, None)
    print(f"Removed MCP server '{name}'{' (closed)' if closed else ''}.")


async def _restart(servers: McpServers, name: str) -> None:
    connection = servers.connection(name)
    if connection is None:
        raise UsageError(f"no MCP server named {name!r}; see %chat mcp list")
    await connection.close()
    try:
        tools = await connection.list_tools()
    except McpServerError as exc:
        raise UsageError(f"MCP server '{name}': {exc}") from None
    names = ", ".join(tool.name for tool in tools)
    print(f"Restarted MCP server '{name}': {plural(len(tools), 'tool')} ({names or 'none'}).")
