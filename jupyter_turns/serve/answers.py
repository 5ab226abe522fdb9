"""How the server answers each POST: one JSON body when its call can neither ask nor wait,
an SSE stream otherwise.

The ``mcp`` SDK's Streamable HTTP transport answers either every POST of a server with an SSE
stream (notifications tied to the request ride on it: the progress a waiting call sends) or
every one with a single JSON body (``json_response=True``: such notifications are dropped, and
a client whose call waits for a person gets no progress and times out). An SSE answer costs
more: its stream, and the SDK's own client closes it at its last event, before the stream's
end, so ``httpx`` cannot reuse the connection and every call opens a new one (B14,
docs/benchmarks.md). So the choice is made per POST (:class:`OneBodyWhenQuick`): a call whose
``quick`` test passes (the host's: a read, which never asks, with no progress asked for and no
cell running that it would wait behind) gets one JSON body, everything else the stream. A quick
call's handler sends nothing tied to its request: progress is its only such message, and the
SDK sends none without the client's ``progressToken``.

The transport mode is read through a context variable set for the POST's own task
(:data:`_one_body`); the SDK's message router, a task of the session started before any call,
always sees the default (the stream), so it routes a streamed call's progress as before.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable
from typing import Any
from uuid import uuid4

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

__all__ = ["OneBodyWhenQuick", "Quick", "quick_call", "streamable_http_app"]

Quick = Callable[[Any], bool]  # a POST's parsed JSON-RPC message: may it get one JSON body?

_one_body: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "jupyter_turns_one_body", default=False
)


def quick_call(message: Any, reads: frozenset[str], busy: Callable[[], bool]) -> bool:
    """Whether ``message`` is a ``tools/call`` of one of ``reads`` (tools that never ask) that
    asks for no progress, while no cell runs (``busy`` false) that it would wait behind."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return False
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return False  # the SDK answers what is wrong with it
    if params["name"] not in reads:
        return False
    meta = params.get("_meta")
    if isinstance(meta, dict) and meta.get("progressToken") is not None:
        return False
    return not busy()


class OneBodyWhenQuick(StreamableHTTPServerTransport):
    """The SDK's transport, answering a POST with one JSON body when ``quick`` says so."""

    def __init__(self, *args: Any, quick: Quick, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._quick = quick

    @property  # the SDK sets it once, for the whole session; here it is read per POST
    def is_json_response_enabled(self) -> bool:
        return _one_body.get()

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        pass  # chosen per POST (:meth:`_handle_post_request`), never for the whole session

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        body = await request.body()  # kept by the request: the SDK reads it again
        try:
            message = json.loads(body)
        except ValueError:
            message = None  # the SDK answers the parse error
        chosen = _one_body.set(self._quick(message))
        try:
            await super()._handle_post_request(scope, request, receive, send)
        finally:
            _one_body.reset(chosen)


class _Sessions(StreamableHTTPSessionManager):
    """The SDK's session manager, giving each new session a :class:`OneBodyWhenQuick`."""

    def __init__(self, *args: Any, quick: Quick, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._quick = quick

    def _admit_session(
        self, requestor: AuthorizationContext | None
    ) -> StreamableHTTPServerTransport | None:
        # as the SDK's own (mcp 2.3), with this transport
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return None
        transport = OneBodyWhenQuick(
            mcp_session_id=uuid4().hex,
            event_store=self.event_store,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
            quick=self._quick,
        )
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        return transport


def streamable_http_app(
    server: Server[Any], security: TransportSecuritySettings, quick: Quick
) -> Starlette:
    """``server`` at ``/mcp`` over Streamable HTTP, as ``Server.streamable_http_app`` builds
    it (no auth, a stateful session per client), answering quick calls with one JSON body."""
    sessions = _Sessions(server, security_settings=security, quick=quick)
    return Starlette(
        routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(sessions))],
        lifespan=lambda app: sessions.run(),
    )
