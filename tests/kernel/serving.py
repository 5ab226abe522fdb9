"""Helpers for the ``%chat serve`` tests: a real kernel serving, and the real ``mcp`` SDK's
client reaching it over Streamable HTTP (run on a thread of its own, so the test's main thread
can go on playing the page: pumping IOPub, saying ``ready``, clicking)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from jupyter_turns.serve.runtime import RuntimeInfo, find
from tests.support.fake_page import FakePage

from .kernel import KernelDriver

T = TypeVar("T")
CLAUDE = types.Implementation(name="claude-code", version="2.1.332")
CODEX = types.Implementation(name="codex-mcp-client", version="0.80.0")


def start_serving(kernel: KernelDriver, runtime: Path, line: str = "%chat serve") -> RuntimeInfo:
    """Run ``line`` in the kernel and read the server it started from the runtime folder."""
    cell = kernel.run(line)
    errors = [o for o in cell.outputs if o["output_type"] == "error"]
    assert not errors, errors
    servers = find(runtime).servers
    assert len(servers) == 1, (servers, cell.outputs)
    return servers[0]


async def _session(
    url: str,
    token: str | None,
    use: Callable[[ClientSession], Awaitable[T]],
    client: types.Implementation = CLAUDE,
    headers: dict[str, str] | None = None,
    on_response: Callable[[Any], Awaitable[None]] | None = None,
) -> T:
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    http = create_mcp_http_client(headers=sent)
    if on_response is not None:
        http.event_hooks["response"].append(on_response)
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, client_info=client) as session,
    ):
        await session.initialize()
        return await use(session)


def with_client(
    info: RuntimeInfo,
    use: Callable[[ClientSession], Awaitable[T]],
    *,
    token: str | None = "",
    client: types.Implementation = CLAUDE,
    headers: dict[str, str] | None = None,
    on_response: Callable[[Any], Awaitable[None]] | None = None,
) -> T:
    """Connect, initialize, ``use`` the session; blocking (the kernel needs no pumping).
    ``on_response``: called with each HTTP response the client gets (an httpx event hook)."""
    chosen = info.token if token == "" else token
    return asyncio.run(_session(info.url, chosen, use, client, headers, on_response))


def in_background(
    info: RuntimeInfo,
    use: Callable[[ClientSession], Awaitable[T]],
    *,
    client: types.Implementation = CLAUDE,
) -> concurrent.futures.Future[T]:
    """``with_client`` on a thread: the test pumps the kernel and clicks meanwhile."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(asyncio.run(_session(info.url, info.token, use, client)))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return future


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def call(
    name: str, arguments: dict[str, Any] | None = None, **kwargs: Any
) -> Callable[[ClientSession], Awaitable[types.CallToolResult]]:
    async def use(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool(name, arguments or {}, **kwargs)

    return use


class PagePlayer:
    """Plays the notebook page for the kernel: answers the metadata comm's requests (cells,
    edits) as the extension would, with a :class:`~tests.support.fake_page.FakePage`, and
    keeps the records the kernel writes to cell metadata."""

    def __init__(self, kernel: KernelDriver, page: FakePage) -> None:
        self.kernel = kernel
        self.page = page
        self.records: dict[str, dict[str, Any]] = {}
        kernel.on_comm = self._on_comm

    def _on_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        if "request" in data and "request_id" in data:
            answer = asyncio.run(self.page.ask(dict(data), 0)) or {"ok": False}
            self.kernel.reply_comm(comm_id, {"request_id": data["request_id"], **answer})
        elif data.get("key") == "jupyter_turns" and isinstance(data.get("value"), dict):
            self.records[str(data.get("cell_id"))] = data["value"]


def run_agent(
    kernel: KernelDriver,
    info: RuntimeInfo,
    use: Callable[[ClientSession], Awaitable[T]],
    timeout: float = 90,
) -> T:
    """Run the client on its thread while the test pumps the kernel (the page answers)."""
    future = in_background(info, use)
    kernel.wait(future.done, timeout, "the agent's calls to end")
    return future.result()
