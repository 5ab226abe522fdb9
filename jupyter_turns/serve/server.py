"""The MCP server a kernel hosts: Streamable HTTP on 127.0.0.1, for this user only.

The HTTP side (uvicorn, the ``mcp`` SDK's session manager) runs on a thread of its own with its
own event loop, and touches nothing of the kernel: each ``tools/call`` is handed to the kernel's
loop (:class:`Calls`, which runs it there: approvals, the page, the record) and awaited from
here. So the server answers while a cell runs, a call waits behind a running cell, progress
notifications keep a waiting client from timing out however long the person takes, and a
client's ``notifications/cancelled`` reaches a cell's code that blocks the kernel's loop
(:meth:`Calls.interrupt`: the kernel's own interrupt, as ■ would). A read that asks for no
progress while no cell runs is answered in one JSON body, every other call with an SSE stream
(:mod:`.answers`).

Only the user gets in (:func:`guarded`): the bearer token (random per server, compared in
constant time), the ``Host`` and ``Origin`` headers (no DNS rebinding from a web page: only
this server's own loopback address and port), a peer on the loopback. The token is never saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..model.events import ToolCallResponse, new_id
from .answers import quick_call, streamable_http_app
from .calls import Incoming
from .protocol import call_result, client_label

__all__ = ["SERVER_NAME", "Calls", "McpHost", "guarded"]

SERVER_NAME = "jupyter"  # the name in clients' configs: Claude Code sees mcp__jupyter__...
PROGRESS_EVERY = 5.0  # seconds between progress notifications while a call is open
START_TIMEOUT = 20.0

log = logging.getLogger(__name__)


class Calls(Protocol):
    """What the server needs of the kernel's side (:class:`~.calls.ServeSession`)."""

    async def call(self, incoming: Incoming) -> ToolCallResponse:
        """Run the call on the kernel's loop; its one response, however it ended."""
        ...

    def status(self, call_id: str) -> str:
        """What the call waits for now, in a few words (read from the server's thread)."""
        ...

    def interrupt(self, call_id: str) -> None:
        """The client cancelled the call: interrupt its running code (any thread)."""
        ...

    def connected(self, client: str) -> None:
        """A client listed the tools or called one (any thread)."""
        ...

    def busy(self) -> bool:
        """Whether a cell runs in the kernel now, which a call would wait behind (read from
        the server's thread)."""
        ...


def _refuse(status: int, text: str, **headers: str) -> PlainTextResponse:
    return PlainTextResponse(text, status_code=status, headers=headers)


def _loopback(client: Any) -> bool:
    try:
        return ipaddress.ip_address(client[0]).is_loopback
    except (TypeError, ValueError, IndexError):
        return False


def guarded(app: ASGIApp, *, token: str, port: int) -> ASGIApp:
    """``app`` behind the checks every request passes, in this order: a loopback peer, a
    ``Host`` naming this server, no foreign ``Origin``, the bearer token."""
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    origins = {f"http://{host}" for host in hosts}
    expected = token.encode()

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)  # the lifespan
            return
        headers = Headers(scope=scope)
        refusal = None
        if not _loopback(scope.get("client")):
            refusal = _refuse(403, "Only this machine may connect")
        elif headers.get("host") not in hosts:
            refusal = _refuse(421, "Invalid Host header")
        elif headers.get("origin") is not None and headers.get("origin") not in origins:
            refusal = _refuse(403, "Invalid Origin header")
        else:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.encode(), expected):
                refusal = _refuse(
                    401, "A valid bearer token is required", **{"WWW-Authenticate": "Bearer"}
                )
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await app(scope, receive, send)

    return guard


@dataclass
class McpHost:
    """The server: its port, its token, its thread. :meth:`start` once, :meth:`stop` once."""

    tools: Sequence[types.Tool]
    calls: Calls
    loop: asyncio.AbstractEventLoop  # the kernel's: where every call runs
    progress_every: float = PROGRESS_EVERY
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    port: int = 0
    _thread: threading.Thread | None = None
    _server: Any = None
    _failure: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        """Bind a free port on 127.0.0.1 and serve from a thread; returns once it listens."""
        import uvicorn

        # IPPROTO_TCP named: asyncio sets TCP_NODELAY on each accepted socket only when its
        # protocol says TCP, and without it every response waited ~40 ms (Nagle's algorithm
        # holding the body until the client's delayed ACK of the headers)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            guarded(self._app(), token=self.token, port=self.port),
            log_level="warning",
            access_log=False,
            proxy_headers=False,  # no proxy stands in front: the peer is who connected
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._serve, args=(sock,), name="jupyter-turns-mcp", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() > deadline:
                raise RuntimeError("the MCP server did not start in time")
            time.sleep(0.01)
        if not self._server.started:
            raise RuntimeError(f"the MCP server did not start: {self._failure}")

    def _serve(self, sock: socket.socket) -> None:
        try:
            self._server.run(sockets=[sock])
        except BaseException as exc:  # reported by start(); the thread ends here
            self._failure = exc
        finally:
            sock.close()

    def stop(self, wait: float = 5.0) -> None:
        """Stop listening and end the thread (open calls are cancelled by the shutdown)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(wait)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ the MCP side

    def _app(self) -> ASGIApp:
        server: Server[Any] = Server(
            SERVER_NAME,
            instructions="The user's live Jupyter notebook: read its cells, outputs and "
            "variables; changes and runs are approved by the user in the notebook page.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        hosts = [f"127.0.0.1:{self.port}", f"localhost:{self.port}"]
        security = TransportSecuritySettings(
            allowed_hosts=hosts, allowed_origins=[f"http://{h}" for h in hosts]
        )
        reads = frozenset(
            t.name for t in self.tools if t.annotations and t.annotations.read_only_hint
        )
        # a read with no progress asked for and no cell to wait behind: one JSON body,
        # answered by the transport itself (:mod:`.answers`)
        app: ASGIApp = streamable_http_app(
            server,
            security,
            lambda message: quick_call(message, reads, self.calls.busy),
            self._answer,
        )
        return app

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self.calls.connected(_client(ctx))
        return types.ListToolsResult(tools=list(self.tools))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await self._answer(
            _client(ctx),
            params,
            lambda call_id, n: ctx.session.report_progress(n, message=self.calls.status(call_id)),
        )

    async def _answer(
        self,
        client: str,
        params: types.CallToolRequestParams,
        progress: Callable[[str, float], Awaitable[None]] | None = None,
    ) -> types.CallToolResult:
        """Run one call on the kernel's loop and answer it; ``progress`` (call id, count)
        every ``progress_every`` seconds while it is open."""
        self.calls.connected(client)
        incoming = Incoming(new_id(), params.name, dict(params.arguments or {}), client)
        future = asyncio.run_coroutine_threadsafe(self.calls.call(incoming), self.loop)
        try:
            response = await _with_progress(
                asyncio.wrap_future(future),
                None if progress is None else lambda n: progress(incoming.call_id, n),
                self.progress_every,
            )
        except asyncio.CancelledError:
            future.cancel()  # the kernel's task is cancelled once its loop runs
            self.calls.interrupt(incoming.call_id)  # code blocking that loop is interrupted
            raise
        return call_result(response)


def _client(ctx: ServerRequestContext[Any]) -> str:
    params = ctx.session.client_params
    return client_label(params.client_info if params is not None else None)


async def _with_progress(
    waiting: Awaitable[ToolCallResponse],
    progress: Callable[[float], Awaitable[None]] | None,
    every: float,
) -> ToolCallResponse:
    """Await ``waiting``, reporting progress every ``every`` seconds until it is done (no
    ``progress``: only awaited)."""
    if progress is None:
        return await waiting
    task = asyncio.ensure_future(waiting)
    ticks = 0
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=every)
            if done:
                return task.result()
            ticks += 1
            with contextlib.suppress(Exception):  # a client gone: the call still ends
                await progress(ticks)
    finally:
        task.cancel()
