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

A quick call of a session that finished its handshake is answered by the transport itself
(:meth:`OneBodyWhenQuick._answer_directly`): its params validated as the SDK validates them, the
host's :data:`Answer` run, the result shaped as the SDK shapes it; it skips only the SDK's
dispatch (its streams, a task per request, a validation of the whole message against every
request type), which cost more than the HTTP itself (B14). Anything else, and anything not
plainly well formed, takes the SDK's path, which answers what is wrong with it.

The transport mode is read through a context variable set for the POST's own task
(:data:`_one_body`); the SDK's message router, a task of the session started before any call,
always sees the default (the stream), so it routes a streamed call's progress as before.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import uuid4

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .protocol import client_label

__all__ = ["Answer", "OneBodyWhenQuick", "Quick", "quick_call", "streamable_http_app"]

Quick = Callable[[Any], bool]  # a POST's parsed JSON-RPC message: may it get one JSON body?
# the host's answer to a call: (the client's name, the call's params) -> its result
Answer = Callable[[str, types.CallToolRequestParams], Awaitable[types.CallToolResult]]

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
    """The SDK's transport, answering a POST with one JSON body when ``quick`` says so, and a
    quick call of a session past its handshake with ``answer`` directly."""

    def __init__(self, *args: Any, quick: Quick, answer: Answer | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._quick = quick
        self._answer = answer
        self._client: types.Implementation | None = None  # from the session's initialize
        self._ready = False  # the client said notifications/initialized

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
        self._note_handshake(message)
        quick = self._quick(message)
        if quick and await self._answer_directly(message, request, send):
            return
        chosen = _one_body.set(quick)
        try:
            await super()._handle_post_request(scope, request, receive, send)
        finally:
            _one_body.reset(chosen)

    def _note_handshake(self, message: Any) -> None:
        """The client's ``clientInfo`` (its ``initialize``), and whether it finished."""
        if not isinstance(message, dict):
            return
        if message.get("method") == "initialize":
            params = message.get("params")
            info = params.get("clientInfo") if isinstance(params, dict) else None
            try:
                self._client = types.Implementation.model_validate(info)
            except ValidationError:
                self._client = None  # the SDK refuses the initialize itself
        elif message.get("method") == "notifications/initialized":
            self._ready = True

    async def _answer_directly(self, message: Any, request: Request, send: Send) -> bool:
        """Answer a quick call here; False (nothing sent) leaves it to the SDK: before the
        handshake ended, another protocol era, a malformed message or headers."""
        version = request.headers.get("mcp-protocol-version")
        request_id = message.get("id")
        if (
            self._answer is None
            or not self._ready
            or version not in HANDSHAKE_PROTOCOL_VERSIONS
            or message.get("jsonrpc") != "2.0"
            or isinstance(request_id, bool)
            or not isinstance(request_id, int | str)
            or not self._check_content_type(request)
            or not check_accept_headers(request)[0]
        ):
            return False
        try:  # as the SDK validates a call: the version's surface, then the params
            methods.validate_client_request("tools/call", version, message.get("params"))
            params = types.CallToolRequestParams.model_validate(message["params"], by_name=False)
        except (ValidationError, KeyError, ValueError):
            return False
        if not await self._validate_request_headers(request, send):
            return True  # the SDK's own refusal (no session id, another session's) is sent
        result = await self._answer(client_label(self._client), params)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        # shaped for the session's protocol version, as the SDK shapes a result
        shaped = methods.serialize_server_result("tools/call", version, dumped)
        reply = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=shaped)
        await self._create_json_response(reply)(request.scope, request.receive, send)
        return True


class _Sessions(StreamableHTTPSessionManager):
    """The SDK's session manager, giving each new session a :class:`OneBodyWhenQuick`."""

    def __init__(self, *args: Any, quick: Quick, answer: Answer | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._quick = quick
        self._answer = answer

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
            answer=self._answer,
        )
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        return transport


def streamable_http_app(
    server: Server[Any], security: TransportSecuritySettings, quick: Quick, answer: Answer | None
) -> Starlette:
    """``server`` at ``/mcp`` over Streamable HTTP, as ``Server.streamable_http_app`` builds
    it (no auth, a stateful session per client), answering quick calls with one JSON body
    (given ``answer``, directly)."""
    sessions = _Sessions(server, security_settings=security, quick=quick, answer=answer)
    return Starlette(
        routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(sessions))],
        lifespan=lambda app: sessions.run(),
    )
