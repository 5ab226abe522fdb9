"""Scripted responses for the local Anthropic test server, and recorded exchanges.

A ``Reply`` is a status, headers and a list of steps (byte pieces written and flushed one at a
time, one HTTP chunk each when chunked; ``Pause``s; ``WaitFor``s), then an ending: a clean end of
the body, a FIN mid-body (``"close"``) or a TCP RST (``"reset"``).  Its class methods build the
recorded replay, Anthropic-shaped HTTP errors and the transport faults a client must survive.
Recorded exchanges (``tests/fixtures/anthropic/*.yml``) load with ``load_recording``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from .anthropic_sse import error_event

__all__ = [
    "ERROR_TYPES",
    "Exchange",
    "Pause",
    "Reply",
    "Step",
    "WaitFor",
    "load_recording",
    "new_request_id",
    "recording_path",
    "split_awkwardly",
    "split_events",
]

_REPO = Path(__file__).resolve().parents[2]
RECORDING_DIRS = (
    _REPO / "tests" / "fixtures" / "anthropic",
    _REPO.parent / "shared" / "fixtures" / "anthropic",
)
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_request_ids = itertools.count(1)


def new_request_id() -> str:
    return f"req_test{next(_request_ids):020d}"


# ----------------------------------------------------------------------------- recordings


@dataclass(frozen=True)
class Exchange:
    """One recorded request/response pair."""

    method: str
    path: str
    request_body: dict[str, Any]
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def reply(self, *, delay: float = 0.0) -> Reply:
        """Replay the recorded response (SSE bodies one event per HTTP chunk)."""
        expect = (self.method, self.path)
        if any(
            v.startswith("text/event-stream")
            for k, v in self.headers
            if k.lower() == "content-type"
        ):
            return Reply.sse(
                self.body, status=self.status, headers=self.headers, delay=delay, expect=expect
            )
        return Reply(self.status, tuple(self.headers), (self.body,), chunked=False, expect=expect)


def recording_path(name: str) -> Path:
    """Path of a recorded exchange file, from the repo's fixtures or the shared ones beside it."""
    for directory in RECORDING_DIRS:
        if (directory / name).is_file():
            return directory / name
    raise FileNotFoundError(f"{name} not found in {', '.join(map(str, RECORDING_DIRS))}")


def load_recording(path: str | Path) -> list[Exchange]:
    """Every document of a recorded YAML file, in order (``body`` is the SSE text as UTF-8)."""
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    return [
        Exchange(
            method=d["when"]["method"],
            path=d["when"]["path"],
            request_body=json.loads(d["when"]["json_body_str"]),
            status=int(d["then"]["status"]),
            headers=[(h["name"], h["value"]) for h in d["then"].get("header", [])],
            body=d["then"]["body"].encode("utf-8"),
        )
        for d in docs
    ]


# ----------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Pause:
    """Sleep between two writes (cut short when the server closes)."""

    seconds: float


@dataclass(frozen=True)
class WaitFor:
    """Stop writing until ``event`` is set; give up if the client leaves or the server closes."""

    event: threading.Event
    timeout: float = 30.0


Step = bytes | Pause | WaitFor
Ending = Literal["complete", "close", "reset"]


def split_events(body: str | bytes) -> list[bytes]:
    """An SSE body cut after each blank line; the pieces join back to the exact body."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    parts = data.split(b"\n\n")
    return [p + b"\n\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def split_awkwardly(body: str | bytes) -> list[bytes]:
    """Cut in the middle of every line and inside every multi-byte UTF-8 character."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    cuts: set[int] = set()
    start = 0
    for line in data.split(b"\n"):
        cuts.add(start + len(line) // 2)
        start += len(line) + 1
    cuts.update(i + 1 for i, b in enumerate(data) if b >= 0xC0)  # after each lead byte
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(data)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def _paced(pieces: Iterable[bytes], delay: float) -> tuple[Step, ...]:
    steps: list[Step] = []
    for piece in pieces:
        if steps and delay > 0:
            steps.append(Pause(delay))
        steps.append(piece)
    return tuple(steps)


def _merge(
    defaults: Sequence[tuple[str, str]], extra: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    names = {k.lower() for k, _ in extra}
    return tuple([(k, v) for k, v in defaults if k.lower() not in names] + list(extra))


_SSE_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))
SSEBody = str | bytes | Sequence[bytes]


@dataclass(frozen=True)
class Reply:
    """What the server does with one request.  Build with the class methods."""

    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    steps: tuple[Step, ...] = ()
    chunked: bool = True  # else Content-Length (``content_length`` or the sum of the pieces)
    ending: Ending = "complete"
    head: bool = True  # False: write nothing at all, just end the connection
    content_length: int | None = None
    expect: tuple[str, str] | None = ("POST", "/v1/messages")  # (method, path); None: any

    @classmethod
    def sse(
        cls,
        body: SSEBody,
        *,
        delay: float = 0.0,
        status: int = 200,
        headers: Sequence[tuple[str, str]] = (),
        chunked: bool = True,
        expect: tuple[str, str] | None = ("POST", "/v1/messages"),
    ) -> Reply:
        """An event stream; a str/bytes body is sent one event per chunk, a list piece by piece."""
        pieces = split_events(body) if isinstance(body, str | bytes) else list(body)
        return cls(
            status, _merge(_SSE_HEADERS, headers), _paced(pieces, delay), chunked, expect=expect
        )

    @classmethod
    def json(cls, status: int, body: object, *, headers: Sequence[tuple[str, str]] = ()) -> Reply:
        data = json.dumps(body).encode("utf-8")
        return cls(status, _merge([("content-type", "application/json")], headers), (data,), False)

    @classmethod
    def error(
        cls,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        retry_after: float | None = None,
        retry_after_ms: int | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> Reply:
        """An Anthropic-shaped error: ``{"type":"error","error":{...},"request_id":...}``."""
        kind = error_type or ERROR_TYPES.get(status, "api_error")
        rid = new_request_id()
        extra = [("request-id", rid)]
        if retry_after is not None:
            extra.append(("retry-after", f"{retry_after:g}"))
        if retry_after_ms is not None:
            extra.append(("retry-after-ms", str(retry_after_ms)))
        default = "Overloaded" if kind == "overloaded_error" else f"test server: {kind}"
        error = {"type": kind, "message": message or default}
        body = {"type": "error", "error": error, "request_id": rid}
        return cls.json(status, body, headers=[*extra, *headers])

    @classmethod
    def drop(cls, *, reset: bool = False) -> Reply:
        """Read the request, then end the connection without a byte (FIN, or RST if ``reset``)."""
        return cls(head=False, ending="reset" if reset else "close")

    @classmethod
    def reset_after(cls, body: str | bytes, events: int, *, chunked: bool = True) -> Reply:
        """Headers and the first ``events`` events, then a TCP RST (SO_LINGER 0)."""
        full = body.encode("utf-8") if isinstance(body, str) else body
        sent = cls.sse(split_events(full)[:events], chunked=chunked)
        return replace(sent, ending="reset", content_length=None if chunked else len(full))

    @classmethod
    def close_after(cls, body: str | bytes, events: int, *, chunked: bool = True) -> Reply:
        """Like ``reset_after`` but a plain FIN: the HTTP body is left incomplete."""
        return replace(cls.reset_after(body, events, chunked=chunked), ending="close")

    @classmethod
    def truncated(
        cls, body: str | bytes, events: int | None = None, *, chunked: bool = True
    ) -> Reply:
        """A well-framed body that stops early: after ``events`` events, or just before
        ``message_stop`` when ``events`` is None.  The connection stays usable."""
        pieces = split_events(body)
        kept = (
            pieces[:events]
            if events is not None
            else [p for p in pieces if not p.startswith(b"event: message_stop")]
        )
        return cls.sse(kept, chunked=chunked)

    @classmethod
    def error_event_after(
        cls,
        body: str | bytes,
        events: int,
        *,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
    ) -> Reply:
        """The first ``events`` events, then ``event: error`` and a clean end of the body."""
        error = error_event(error_type, message).encode("utf-8")
        return cls.sse([*split_events(body)[:events], error])

    @classmethod
    def hang_after(
        cls, body: str | bytes, events: int, release: threading.Event, *, timeout: float = 30.0
    ) -> Reply:
        """The first ``events`` events, then nothing until ``release`` is set (the rest follows)
        or the client disconnects or the server closes (the connection is then dropped)."""
        pieces = split_events(body)
        steps: tuple[Step, ...] = (*pieces[:events], WaitFor(release, timeout), *pieces[events:])
        return replace(cls.sse([]), steps=steps)

    @classmethod
    def split(cls, body: str | bytes, *, pause: float = 0.002) -> Reply:
        """Chunked, cut mid-line and mid-UTF-8-character (``split_awkwardly``), a pause between."""
        return cls.sse(split_awkwardly(body), delay=pause)
