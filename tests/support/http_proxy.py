"""A small forward HTTP proxy on 127.0.0.1 for tests (stdlib, one thread per connection).

It shows that a client honoured ``HTTP_PROXY`` / ``HTTPS_PROXY``: ``proxy.carried`` records
every request it forwarded (``("POST", "http://127.0.0.1:PORT/v1/messages")``) and every tunnel
it opened (``("CONNECT", "127.0.0.1:PORT")``).  A plain-HTTP request in absolute form is sent on
to its origin on a fresh connection and the response is passed back as it arrives (a chunked body
is re-chunked piece by piece, so an event stream still streams); a body cut off upstream is cut off
for the client too (request bodies are read by Content-Length; a chunked one gets a 411).
``CONNECT host:port`` answers 200 and then relays bytes both ways (TLS passes through untouched;
the client must wait for the 200 before it speaks, as HTTP clients do).  Only loopback targets
are carried (anything else gets a 403 and is recorded in ``refused``), so no test can reach the
internet through it.  ``close()`` ends open connections and tunnels and joins every thread it
started.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import ipaddress
import selectors
import socket
import socketserver
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, cast

__all__ = ["Carried", "ForwardProxy"]

# hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never forwarded
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
_PIECE = 65536


@dataclass(frozen=True)
class Carried:
    method: str  # "CONNECT" for a tunnel
    target: str  # the absolute URL, or host:port for a tunnel


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def owner(self) -> ForwardProxy:
        return cast(_TCPServer, self.server).owner

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_CONNECT(self) -> None:
        host, _, port = self.path.rpartition(":")
        if not (port.isdigit() and self._allowed("CONNECT", self.path, host)):
            return
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        except OSError as exc:
            self.send_error(502, f"tunnel to {self.path} failed: {exc}")
            return
        self.owner._record(Carried("CONNECT", self.path))
        self.owner._track(upstream)
        try:
            self.send_response(200, "Connection established")
            self.end_headers()
            self._relay(upstream)
        finally:
            self.owner._untrack(upstream)
            upstream.close()
            self.close_connection = True

    def _relay(self, upstream: socket.socket) -> None:
        """Bytes both ways until either side closes (a half-close is passed on) or the proxy
        closes."""
        ends = {self.connection: upstream, upstream: self.connection}
        open_ends = set(ends)
        with selectors.DefaultSelector() as selector:
            for end in ends:
                selector.register(end, selectors.EVENT_READ)
            while open_ends and not self.owner._closing.is_set():
                for key, _ in selector.select(0.05):
                    source = cast(socket.socket, key.fileobj)
                    try:
                        data = source.recv(_PIECE)
                    except OSError:
                        return
                    if data:
                        try:
                            ends[source].sendall(data)
                        except OSError:
                            return
                        continue
                    selector.unregister(source)
                    open_ends.discard(source)
                    with contextlib.suppress(OSError):
                        ends[source].shutdown(socket.SHUT_WR)

    def _forward(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.scheme != "http" or not url.hostname:
            self.send_error(400, "a proxy request needs an absolute http:// URL")
            return
        if not self._allowed(self.command, self.path, url.hostname):
            return
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            self.send_error(411, "the test proxy reads request bodies by Content-Length only")
            return
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        origin = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
        self.owner._record(Carried(self.command, self.path))
        try:
            target = urllib.parse.urlunsplit(("", "", url.path or "/", url.query, ""))
            origin.request(self.command, target, body=body or None, headers=headers)
            response = origin.getresponse()
            self._pass_back(response)
        except (OSError, http.client.HTTPException):  # upstream broke off: so does the reply
            self.close_connection = True
        finally:
            origin.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _forward

    def _pass_back(self, response: http.client.HTTPResponse) -> None:
        """The status and headers at once, then the body piece by piece as it arrives."""
        chunked = response.chunked
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in _HOP:
                self.send_header(name, value)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        elif response.length is None and self.command != "HEAD":
            self.close_connection = True  # the body ends when the origin closes
        self.end_headers()
        self.wfile.flush()
        while piece := response.read1(_PIECE):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            self.wfile.flush()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        elif response.length:  # fewer bytes than announced: the client must see it broke off
            self.close_connection = True

    def _allowed(self, method: str, target: str, host: str) -> bool:
        if _is_loopback(host):
            return True
        self.owner._refuse(Carried(method, target))
        self.send_error(403, "the test proxy only carries loopback targets")
        return False


class _TCPServer(socketserver.TCPServer):
    allow_reuse_address = True

    def __init__(self, owner: ForwardProxy, address: tuple[str, int]) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """One daemon thread per connection, tracked so ``close()`` can end and join it."""
        thread = threading.Thread(
            target=self._run, args=(request, client_address), daemon=True, name="test-proxy-conn"
        )
        self.owner._start(thread, request)

    def _run(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.owner._untrack(request)
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client or origin dropped its connection: passed on, not a proxy fault
        self.owner._fail(f"proxy handler error for {client_address}")
        super().handle_error(request, client_address)


class ForwardProxy:
    """See the module docstring.  Use as a context manager (or ``start()``/``close()``)."""

    def __init__(self, *, join_timeout: float = 5.0) -> None:
        self._join_timeout = join_timeout
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._carried: list[Carried] = []
        self._refused: list[Carried] = []
        self._failures: list[str] = []
        self._threads: list[threading.Thread] = []
        self._socks: set[socket.socket] = set()
        self._server: _TCPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._server = _TCPServer(self, ("127.0.0.1", 0))
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="test-proxy",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop accepting, end open connections and tunnels, join every thread."""
        if self._server is None or self._thread is None:
            return
        self._closing.set()
        self._server.shutdown()
        self._thread.join()
        with self._lock:
            socks, threads = list(self._socks), list(self._threads)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        deadline = time.monotonic() + self._join_timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._server = self._thread = None
        if alive := [t.name for t in threads if t.is_alive()]:
            raise RuntimeError(f"test proxy threads still running: {alive}")

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
            raise RuntimeError("proxy not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def carried(self) -> list[Carried]:
        """Every request forwarded and tunnel opened, in order."""
        with self._lock:
            return list(self._carried)

    @property
    def refused(self) -> list[Carried]:
        """Requests for targets off this machine (answered 403, never carried)."""
        with self._lock:
            return list(self._refused)

    @property
    def failures(self) -> list[str]:
        with self._lock:
            return list(self._failures)

    def _start(self, thread: threading.Thread, sock: socket.socket) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            self._socks.add(sock)
        thread.start()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.add(sock)

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.discard(sock)

    def _record(self, carried: Carried) -> None:
        with self._lock:
            self._carried.append(carried)

    def _refuse(self, carried: Carried) -> None:
        with self._lock:
            self._refused.append(carried)

    def _fail(self, message: str) -> None:
        with self._lock:
            self._failures.append(message)
