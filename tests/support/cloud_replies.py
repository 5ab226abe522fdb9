"""What Amazon Bedrock and Google Vertex AI send for Claude, for the local test server.

Bedrock streams the AWS binary event stream (``application/vnd.amazon.eventstream``): each
message is a prelude (total length, headers length, the prelude's CRC32), headers (``:event-type
chunk``, ``:content-type application/json``, ``:message-type event``), a payload
``{"bytes": base64(<one Anthropic stream event's JSON>)}`` and the message's CRC32. Errors inside
the stream are ``:message-type exception`` messages named by ``:exception-type``; HTTP errors
are ``{"message": ...}`` with the error's name in ``x-amzn-errortype``. Vertex streams the
Anthropic event stream itself, and its HTTP errors are Google's ``{"error": {"code",
"message", "status"}}``. :func:`bedrock_frames` re-frames a recorded Anthropic SSE body (its
``data`` bytes unchanged) as Bedrock chunks, so the real SDK decodes real events.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .anthropic_replies import Ending, Reply, split_events

__all__ = [
    "EVENTSTREAM",
    "bedrock_error",
    "bedrock_exception",
    "bedrock_frames",
    "bedrock_json",
    "bedrock_path",
    "bedrock_stream",
    "eventstream_message",
    "sse_data",
    "vertex_error",
    "vertex_path",
]

EVENTSTREAM = "application/vnd.amazon.eventstream"
_STRING = 7  # the event stream's header value type for a UTF-8 string


def eventstream_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One AWS event stream message, CRCs included."""
    encoded = b"".join(
        struct.pack("!B", len(name.encode())) + name.encode()
        + struct.pack("!BH", _STRING, len(value.encode())) + value.encode()
        for name, value in headers.items()
    )  # fmt: skip
    prelude = struct.pack("!II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    prelude += struct.pack("!I", binascii.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack("!I", binascii.crc32(message))


def _chunk(data: bytes) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(data).decode("ascii")}).encode()
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return eventstream_message(headers, payload)


def bedrock_exception(exception_type: str, message: str) -> bytes:
    """An exception message inside the stream (``throttlingException``,
    ``modelStreamErrorException``...)."""
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return eventstream_message(headers, json.dumps({"message": message}).encode())


def sse_data(body: str | bytes) -> list[bytes]:
    """The ``data`` bytes of each event of an SSE body, exactly as sent (padding kept)."""
    out = []
    for piece in split_events(body):
        for line in piece.split(b"\n"):
            if line.startswith(b"data: "):
                out.append(line[len(b"data: ") :])
    return out


def bedrock_frames(body: str | bytes) -> list[bytes]:
    """Each event of an Anthropic SSE body as a Bedrock ``chunk`` message."""
    return [_chunk(data) for data in sse_data(body)]


def bedrock_path(model: str, *, stream: bool = True) -> str:
    return f"/model/{model}/{'invoke-with-response-stream' if stream else 'invoke'}"


def vertex_path(project: str, region: str, model: str, *, stream: bool = True) -> str:
    specifier = "streamRawPredict" if stream else "rawPredict"
    return f"/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:{specifier}"


def bedrock_stream(
    frames: list[bytes], model: str, *, ending: Ending = "complete", delay: float = 0.0
) -> Reply:
    """A streamed Bedrock answer, one message per HTTP chunk; ``ending="close"`` drops the
    connection after the frames (no end of the chunked body)."""
    reply = Reply.sse(
        frames,
        headers=[("content-type", EVENTSTREAM), ("x-amzn-requestid", "test-request")],
        delay=delay,
        expect=("POST", bedrock_path(model)),
    )
    headers = tuple((k, v) for k, v in reply.headers if k != "cache-control")
    return replace(reply, headers=headers, ending=ending)


def bedrock_json(message: dict[str, Any], model: str) -> Reply:
    """A non-streamed Bedrock answer (``/invoke``): the Messages API's message as JSON."""
    return replace(Reply.json(200, message), expect=("POST", bedrock_path(model, stream=False)))


def bedrock_error(
    status: int, error_type: str, message: str, *, retry_after: float | None = None
) -> Reply:
    """An HTTP error the way Bedrock sends one."""
    headers = [("x-amzn-errortype", f"{error_type}:http://internal.amazon.com/coral/com.amazon")]
    if retry_after is not None:
        headers.append(("retry-after", f"{retry_after:g}"))
    return replace(Reply.json(status, {"message": message}, headers=headers), expect=None)


def vertex_error(
    status: int, google_status: str, message: str, *, retry_after: float | None = None
) -> Reply:
    """An HTTP error the way Vertex AI sends one (Google's error body)."""
    body = {"error": {"code": status, "message": message, "status": google_status}}
    headers = [] if retry_after is None else [("retry-after", f"{retry_after:g}")]
    return replace(Reply.json(status, body, headers=headers), expect=None)
