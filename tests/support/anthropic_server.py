"""A local Anthropic Messages API server for tests.

``AnthropicTestServer`` is a real HTTP/1.1 server on 127.0.0.1 (stdlib ``socketserver``, one
thread per connection, keep-alive) so the real ``anthropic.AsyncAnthropic(base_url=server.url)``
parses real bytes.  Tests queue one ``Reply`` per expected request (see ``anthropic_replies``,
re-exported here); every request is recorded in ``server.requests`` and answered with the next
queued reply, in order.  A request that finds the queue empty gets a 500 ``api_error`` saying the
script is exhausted and is recorded as a failure, which ``assert_all_served()`` reports together
with replies left unserved.  ``close()`` ends open connections and pending ``WaitFor``s and joins
every thread it started.  With ``cache`` set (a ``prompt_cache.PromptCache``) the usage of every
streamed reply is what prompt caching would bill for that request; with ``count_tokens`` on,
``/v1/messages/count_tokens`` is answered by the same token approximation.  Given an
``ssl.SSLContext`` (``tls=``) it serves HTTPS instead (``url`` then starts with ``https://``); a
client that refuses the certificate is counted in ``handshake_failures``, not as a fault.

Nothing else in it is Anthropic's. Claude on Amazon Bedrock and Vertex AI is served the same way
(``cloud_replies`` builds their replies: the AWS event stream, their error bodies, with
``expect`` set to the platform's path), and so are the OpenAI APIs (``openai_sse``: replies for
``POST /v1/responses``; ``openai_chat_replies``: Chat Completions).
"""

from __future__ import annotations

import contextlib
import http
import http.server
import json
import selectors
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from email.utils import formatdate
from types import TracebackType
from typing import Any, Self, cast

from .anthropic_replies import (
    Exchange,
    Pause,
    Reply,
    WaitFor,
    load_recording,
    new_request_id,
    recording_path,
    split_awkwardly,
    split_events,
)
from .prompt_cache import CacheRefused, PromptCache, billed_reply, request_tokens

__all__ = [
    "AnthropicTestServer",
    "Exchange",
    "Pause",
    "RecordedRequest",
    "Reply",
    "WaitFor",
    "load_recording",
    "recording_path",
    "split_awkwardly",
    "split_events",
]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or None when empty or not JSON
    raw: bytes


class _Aborted(Exception):
    """The reply was cut short (client gone, hang timed out or server closing)."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def owner(self) -> AnthropicTestServer:
        return cast(_TCPServer, self.server).owner

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.owner._take(RecordedRequest(self.command, self.path, headers, body, raw))
        try:
            self._send(reply)
        except (OSError, _Aborted):  # client gone, or we cut it short: just drop the connection
            self.close_connection = True
            return
        if reply.ending == "complete":
            return
        self.close_connection = True
        if reply.ending == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()  # drop the makefile() reference so close() really closes (RST)
            self.connection.close()

    do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _serve

    def _send(self, reply: Reply) -> None:
        if not reply.head:
            return
        sock = self.connection
        headers = [
            (k, v)
            for k, v in reply.headers
            if k.lower() not in ("content-length", "transfer-encoding")
        ]
        names = {k.lower() for k, _ in headers}
        if "request-id" not in names:
            headers.append(("request-id", new_request_id()))
        headers.append(("date", formatdate(usegmt=True)))
        if reply.chunked:
            headers.append(("transfer-encoding", "chunked"))
        else:
            length = reply.content_length
            if length is None:
                length = sum(len(s) for s in reply.steps if isinstance(s, bytes))
            headers.append(("content-length", str(length)))
        try:
            reason = http.HTTPStatus(reply.status).phrase
        except ValueError:
            reason = "Overloaded" if reply.status == 529 else "Unknown"
        head = [f"HTTP/1.1 {reply.status} {reason}", *(f"{k}: {v}" for k, v in headers), "", ""]
        sock.sendall("\r\n".join(head).encode("latin-1"))
        for step in reply.steps:
            if isinstance(step, Pause):
                if self.owner._closing.wait(step.seconds):
                    raise _Aborted
            elif isinstance(step, WaitFor):
                self._wait(step)
            elif step:  # an empty chunk would end a chunked body
                sock.sendall(b"%x\r\n%s\r\n" % (len(step), step) if reply.chunked else step)
        if reply.chunked and reply.ending == "complete":
            sock.sendall(b"0\r\n\r\n")

    def _wait(self, step: WaitFor) -> None:
        deadline = time.monotonic() + step.timeout
        while not step.event.wait(0.01):
            if self.owner._closing.is_set() or self._client_gone():
                raise _Aborted
            if time.monotonic() > deadline:
                self.owner._fail(f"WaitFor not released within {step.timeout}s")
                raise _Aborted

    def _client_gone(self) -> bool:
        with selectors.DefaultSelector() as selector:  # no FD_SETSIZE limit, unlike select()
            selector.register(self.connection, selectors.EVENT_READ)
            if not selector.select(0):
                return False
        try:  # the plain socket's recv: an SSLSocket refuses flags (a peek at TLS bytes will do)
            peeked: bytes = socket.socket.recv(self.connection, 1, socket.MSG_PEEK)
        except OSError:
            return True
        return peeked == b""


class _TCPServer(socketserver.TCPServer):
    allow_reuse_address = True

    def __init__(self, owner: AnthropicTestServer, address: tuple[str, int]) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        """The accepted socket, wrapped for TLS when the owner has a context; the handshake is
        left to the connection's own thread (``_run``) so a slow or refused one blocks no one."""
        sock, address = super().get_request()
        if self.owner.tls is not None:
            sock = self.owner.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def process_request(self, request: Any, client_address: Any) -> None:
        """One daemon thread per connection, tracked so ``close()`` can end and join it."""
        thread = threading.Thread(
            target=self._run,
            args=(request, client_address),
            daemon=True,
            name=f"anthropic-test-conn-{client_address[1]}",
        )
        with self.owner._lock:
            self.owner._threads = [t for t in self.owner._threads if t.is_alive()] + [thread]
            self.owner._conns.add(request)
        thread.start()

    def _run(self, request: Any, client_address: Any) -> None:
        try:
            if self._handshake(request):
                self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            with self.owner._lock:
                self.owner._conns.discard(request)
            self.shutdown_request(request)

    def _handshake(self, request: Any) -> bool:
        """True when there is no TLS or its handshake succeeded; a refused one is noted."""
        if not isinstance(request, ssl.SSLSocket):
            return True
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError) as exc:
            with self.owner._lock:
                self.owner._handshake_failures.append(str(exc))
            return False
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client dropped a (kept-alive) connection: its right, not a server fault
        self.owner._fail(f"handler error for {client_address}")
        super().handle_error(request, client_address)  # prints the traceback


class AnthropicTestServer:
    """See the module docstring.  Use as a context manager (or ``start()``/``close()``)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        join_timeout: float = 5.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._address = (host, port)
        self.tls = tls  # set: HTTPS with this (server-side) context
        self._handshake_failures: list[str] = []
        self._join_timeout = join_timeout
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._queue: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._failures: list[str] = []
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self._server: _TCPServer | None = None
        self._thread: threading.Thread | None = None
        self.cache: PromptCache | None = None  # set: usage billed as prompt caching would
        self.count_tokens = False  # True: answer count_tokens by itself, queue untouched

    def start(self) -> Self:
        self._server = _TCPServer(self, self._address)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="anthropic-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, end open connections and hangs, join every thread."""
        if self._server is None or self._thread is None:
            return
        self._closing.set()
        self._server.shutdown()
        self._thread.join()
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        deadline = time.monotonic() + self._join_timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._server = self._thread = None
        if alive := [t.name for t in threads if t.is_alive()]:
            raise RuntimeError(f"anthropic test server threads still running: {alive}")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        host, port = self._server.server_address[:2]
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def failures(self) -> list[str]:
        with self._lock:
            return list(self._failures)

    @property
    def handshake_failures(self) -> list[str]:
        """TLS handshakes that failed (e.g. the client did not trust the certificate)."""
        with self._lock:
            return list(self._handshake_failures)

    @property
    def open_connections(self) -> int:
        """Connections a handler thread is still serving."""
        with self._lock:
            return len(self._conns)

    @property
    def pending(self) -> int:
        """Replies queued and not yet taken by a request."""
        with self._lock:
            return len(self._queue)

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def enqueue_recording(self, exchanges: Iterable[Exchange], *, delay: float = 0.0) -> None:
        self.enqueue(*(e.reply(delay=delay) for e in exchanges))

    def assert_all_served(self) -> None:
        """Raise AssertionError if replies are left unserved or anything went wrong."""
        problems = self.failures
        if self.pending:
            problems.append(f"{self.pending} queued replies never served")
        if problems:
            raise AssertionError("anthropic test server: " + "; ".join(problems))

    def _fail(self, message: str) -> None:
        with self._lock:
            self._failures.append(message)

    def _take(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?")[0]
        if self.count_tokens and path == "/v1/messages/count_tokens":
            with self._lock:
                self._requests.append(request)
            return Reply.json(200, {"input_tokens": request_tokens(request.body or {})})
        with self._lock:
            self._requests.append(request)
            number = len(self._requests)
            reply = self._queue.popleft() if self._queue else None
        if reply is not None and self.cache is not None and path == "/v1/messages":
            try:
                reply = billed_reply(reply, self.cache.bill(request.body or {}))
            except CacheRefused as exc:
                reply = Reply.error(400, str(exc))
        if reply is None:
            message = (
                f"anthropic test server: script exhausted, no reply queued for "
                f"request #{number} {request.method} {request.path}"
            )
            self._fail(message)
            return Reply.error(500, message, error_type="api_error")
        got = (request.method, request.path.split("?")[0])
        if reply.expect is not None and got != reply.expect:
            self._fail(f"request #{number}: expected {reply.expect}, got {got}")
        return reply
