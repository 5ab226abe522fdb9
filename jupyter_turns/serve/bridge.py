"""``jupyter turns mcp``: a stdio MCP server that relays to a notebook's running ``%chat serve``.

For clients that only spawn stdio servers. It reads the runtime files (:mod:`.runtime`), picks
the server of the notebook it is given (``--notebook PATH``) or the only one running, and relays
every message both ways unchanged: stdin to the server's Streamable HTTP endpoint (with its
token, which never appears on a command line), the server's messages to stdout. With no server
to reach it says so on stderr, naming what runs, and exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .runtime import Found, RuntimeInfo, find

__all__ = ["choose", "main"]


def choose(found: Found, notebook: str | None) -> RuntimeInfo | str:
    """The server to relay to, or why there is none to choose."""
    servers = found.servers
    if notebook is not None:
        wanted = Path(notebook).expanduser().resolve()
        matching = [s for s in servers if s.notebook and Path(s.notebook).resolve() == wanted]
        if matching:
            return matching[0]
        return f"no notebook server runs for {wanted}.{_running(servers)}"
    if len(servers) == 1:
        return servers[0]
    if not servers:
        skipped = "".join(f"\n  passed over {reason}" for reason in found.skipped)
        return (
            "no notebook is serving: run `%chat serve` in a notebook cell first "
            f"(it writes where to connect in Jupyter's runtime folder).{skipped}"
        )
    return f"several notebooks are serving; name one with --notebook PATH.{_running(servers)}"


def _running(servers: Sequence[RuntimeInfo]) -> str:
    if not servers:
        return " None is serving: run `%chat serve` in the notebook."
    names = "".join(f"\n  {s.notebook or '(a notebook with no known path)'}" for s in servers)
    return f" Serving now:{names}"


async def relay(info: RuntimeInfo) -> None:
    """Pass messages between this process's stdio and the server until either side ends."""
    import anyio
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server.stdio import stdio_server
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers={"Authorization": f"Bearer {info.token}"})
    async with (
        client,
        stdio_server() as (from_stdin, to_stdout),
        streamable_http_client(info.url, http_client=client) as (from_server, to_server),
        anyio.create_task_group() as group,
    ):

        async def pump(source: Any, sink: Any) -> None:
            async for message in source:
                if isinstance(message, Exception):  # a transport's report, not a message
                    print(f"jupyter turns mcp: {message}", file=sys.stderr)
                    continue
                await sink.send(message)
            group.cancel_scope.cancel()  # one side ended: so does the relay

        group.start_soon(pump, from_stdin, to_server)
        group.start_soon(pump, from_server, to_stdout)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``jupyter-turns`` console script (``jupyter turns mcp`` finds it on PATH)."""
    parser = argparse.ArgumentParser(
        prog="jupyter turns", description="jupyter_turns from a terminal."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    mcp = commands.add_parser(
        "mcp", help="a stdio MCP server relaying to a notebook's running `%%chat serve`"
    )
    mcp.add_argument("--notebook", help="the notebook whose server to reach (its path)")
    mcp.add_argument("--list", action="store_true", help="list the serving notebooks and exit")
    options = parser.parse_args(argv)
    found = find()
    if options.list:
        for server in found.servers:
            print(f"{server.notebook or '(no known path)'}\t{server.url}\ttools: {server.tools}")
        return 0
    chosen = choose(found, options.notebook)
    if isinstance(chosen, str):
        print(f"jupyter turns mcp: {chosen}", file=sys.stderr)
        return 1
    import anyio

    anyio.run(relay, chosen)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
