"""Connection: one MCP server's client session, started on first use and held by one task.

The SDK's ``mcp.Client`` is an anyio context: its task group must be entered and left by the
same task. So a running server has a *holder* task on the kernel's loop that enters the client
(starting a stdio server's process, or opening the HTTP session), publishes it, and waits until
the server is closed or its connection is lost; only the holder ever leaves the context, so the
SDK's own shutdown runs (a stdio server: stdin closed, then SIGTERM, then SIGKILL, each bounded).
The holder only relays the server's messages: it does no work a cell waits for, and a cell's
interrupt never reaches it.

Calls run in the calling tool's task. Cancelling one (Stop, a tool timeout) makes the SDK send
the protocol's ``notifications/cancelled`` for that request (over streamable HTTP on the 2026
protocol: it aborts that request's POST) and leaves the session, and other calls on it, running.
A call that finds the connection closed (the server crashed) marks it lost: the holder lets the
client go, and the next use starts the server again.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import tempfile
from collections.abc import Awaitable
from typing import IO, Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, Implementation
from mcp.types import Tool as McpToolInfo
from mcp_types import CONNECTION_CLOSED

from ..errors import McpServerError
from ..record.mcp_spec import ServerSpec

__all__ = ["CLOSE_TIMEOUT", "START_TIMEOUT", "Connection", "ServerState"]

START_TIMEOUT = 30.0  # seconds for a server to start and answer the handshake
CLOSE_TIMEOUT = 10.0  # the SDK's own shutdown takes at most about 6 s (a stdio server)
_LIST_PAGES = 100  # a server whose tool listing never ends cannot hang a turn
_STDERR_TAIL = 1_500  # characters of a stdio server's error output quoted when it fails
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # a response stream may stay open a while


class ServerState(enum.Enum):
    STOPPED = "not started"
    STARTING = "starting"
    RUNNING = "running"
    FAILED = "failed"


def _client_info() -> Implementation:
    from importlib.metadata import version

    return Implementation(name="jupyter_turns", version=version("jupyter_turns"))


class Connection:
    """One configured server: ``state``, why it is not running (``problem``), its tools as
    last listed, and how many times it was started."""

    def __init__(self, name: str, spec: ServerSpec) -> None:
        self.name = name
        self.spec = spec
        self.state = ServerState.STOPPED
        self.problem: str | None = None
        self.tools: list[McpToolInfo] = []
        self.starts = 0
        self.start_timeout = START_TIMEOUT
        self._client: Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[Client] | None = None
        self._stop = asyncio.Event()
        self._stderr: IO[str] | None = None

    # ------------------------------------------------------------------ using it

    async def client(self) -> Client:
        """The connected client; starts the server first when it is not running (raises
        McpServerError when it cannot). Concurrent callers share one start, and a cancelled
        caller leaves the start to the others."""
        if self.state is ServerState.RUNNING and self._client is not None:
            return self._client
        if self._starting is None or self._starting.done():
            self._starting = asyncio.create_task(self._start(), name=f"mcp start {self.name}")
            self._starting.add_done_callback(_retrieve)
        return await asyncio.shield(self._starting)

    async def list_tools(self) -> list[McpToolInfo]:
        """Every tool the server offers now (all pages), kept in ``tools``."""
        client = await self.client()
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGES):
            page = await self._guard(client, client.list_tools(cursor=cursor))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = tools
        return tools

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        progress: ProgressFnT,
    ) -> CallToolResult:
        """Call ``tool``; raises McpServerError when the server cannot answer."""
        client = await self.client()
        call = client.call_tool(tool, arguments, progress_callback=progress)
        result: CallToolResult = await self._guard(client, call, during="the call")
        return result

    async def close(self) -> None:
        """Stop the server (or forget a failed one) and wait for the SDK's shutdown."""
        self.state, self._client, self.problem = ServerState.STOPPED, None, None
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        self._stop.set()
        holder, self._holder = self._holder, None
        if holder is not None and not holder.done():
            await asyncio.wait({holder}, timeout=CLOSE_TIMEOUT)
            if not holder.done():
                holder.cancel()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def status(self) -> str:
        """``running · 3 tools``, ``failed: ...``, ``not started``."""
        if self.state is ServerState.RUNNING:
            return f"running · {len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        if self.state is ServerState.FAILED and self.problem:
            return f"failed: {self.problem}"
        return str(self.state.value)

    # ------------------------------------------------------------------ the holder

    async def _start(self) -> Client:
        self.state, self.problem = ServerState.STARTING, None
        self.starts += 1
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = stop = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready, stop), name=f"mcp {self.name}")
        try:
            async with asyncio.timeout(self.start_timeout):
                client = await asyncio.shield(ready)
        except TimeoutError:
            ready.cancel()  # nobody waits for it any more
            self._holder.cancel()
            raise self._failed(f"it did not start within {self.start_timeout:g} s") from None
        except McpServerError as exc:
            raise self._failed(str(exc)) from None
        self.state, self._client = ServerState.RUNNING, client
        return client

    async def _hold(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._make_client())
                if ready.done():  # the start gave up meanwhile
                    return
                ready.set_result(client)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpServerError("its start was cancelled"))
            raise
        except McpServerError as exc:
            if not ready.done():
                ready.set_exception(exc)
        except Exception as exc:  # the SDK's start or shutdown failed: say why, never raise
            why = _why(exc)
            if not ready.done():
                ready.set_exception(McpServerError(why))
            elif self._holder is asyncio.current_task() and self.problem is None:
                self.problem = why

    def _make_client(self) -> Client:
        spec = self.spec
        transport: Any
        if spec.command is not None:
            # read back when the server fails; closed at the next start or close
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            params = StdioServerParameters(
                command=spec.command[0], args=spec.command[1:], env=spec.environment()
            )
            transport = stdio_client(params, errlog=self._stderr)
        else:
            assert spec.url is not None
            http = httpx2.AsyncClient(headers=spec.header_values(), timeout=_HTTP_TIMEOUT)
            transport = _with_http_client(http, streamable_http_client(spec.url, http_client=http))
        # no response cache: each turn lists the tools the server offers now
        return Client(transport, client_info=_client_info(), cache=None)

    # ------------------------------------------------------------------ failures

    async def _guard(self, client: Client, work: Awaitable[Any], during: str = "") -> Any:
        """``await work``, turning the SDK's errors into McpServerError; a closed connection
        marks the server lost (the next use restarts it)."""
        try:
            return await work
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise McpServerError(f"the server answered with an error: {exc.message}") from exc
            why = f"its connection closed during {during or 'a request'}"
            if self._client is client:
                self.state, self._client, self.problem = ServerState.FAILED, None, why
                self._stop.set()
            text = self._with_stderr(f"{why} (it is restarted on the next call)")
            raise McpServerError(text) from exc
        except (OSError, ValueError) as exc:  # a broken transport; a result that fails its schema
            raise McpServerError(_why(exc)) from exc

    def _failed(self, why: str) -> McpServerError:
        self.state, self._client = ServerState.FAILED, None
        self.problem = why
        return McpServerError(self._with_stderr(f"it could not be started: {why}"))

    def _with_stderr(self, text: str) -> str:
        """``text``, then the end of a stdio server's error output, if it wrote any."""
        if self._stderr is None:
            return text
        size = os.fstat(self._stderr.fileno()).st_size
        start = max(0, size - _STDERR_TAIL)
        tail = os.pread(self._stderr.fileno(), size - start, start).decode("utf-8", "replace")
        tail = tail.strip()
        return f"{text}. Its last error output:\n{tail}" if tail else text


@contextlib.asynccontextmanager
async def _with_http_client(http: httpx2.AsyncClient, transport: Any) -> Any:
    """The HTTP transport, with the client that carries our headers closed after it."""
    async with http, transport as streams:
        yield streams


def _why(exc: BaseException) -> str:
    """A failure in one line; an anyio exception group says what is inside it."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, MCPError):
        return exc.message
    if isinstance(exc, McpServerError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Read a finished start's outcome, so a start whose callers all left logs nothing."""
    if not task.cancelled():
        task.exception()
