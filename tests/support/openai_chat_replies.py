"""Replies of an OpenAI-compatible Chat Completions server, for the local test server.

The test server (:mod:`tests.support.anthropic_server`) is plain HTTP: what makes a reply a
Chat Completions one is its path (``/v1/chat/completions``, OpenRouter's
``/api/v1/chat/completions``), its body (``data: {chunk}`` lines, ``data: [DONE]``) and its error
shape (``{"error": {"message", "type", "code"}}``). Recorded exchanges are in
``tests/fixtures/openai-chat/{llamacpp,openrouter}/``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .anthropic_replies import Exchange, Reply, load_recording, split_events

__all__ = [
    "CHAT_PATH",
    "FIXTURES",
    "chat_error",
    "chat_reply",
    "chunk",
    "chunk_body",
    "chunk_data",
    "recording",
    "served_at",
]

CHAT_PATH = "/v1/chat/completions"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai-chat"
MODEL = "test-model"


def recording(name: str) -> list[Exchange]:
    """A recorded file: ``"llamacpp/test_chat_completion_stream.yml"``."""
    return load_recording(FIXTURES / name)


def served_at(exchanges: list[Exchange]) -> str:
    """The base URL path the recording was made at (``/v1`` or OpenRouter's ``/api/v1``)."""
    return exchanges[0].path.removesuffix("/chat/completions")


def chat_reply(body: str | bytes | list[bytes], *, path: str = CHAT_PATH) -> Reply:
    """An event stream answering ``POST path``."""
    return Reply.sse(body, expect=("POST", path))


def chat_error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    retry_after: float | None = None,
    path: str = CHAT_PATH,
) -> Reply:
    """An OpenAI-shaped error answering ``POST path``."""
    headers = [("retry-after", f"{retry_after:g}")] if retry_after is not None else []
    error = {"message": message, "type": code or "error", "code": code}
    return replace(Reply.json(status, {"error": error}, headers=headers), expect=("POST", path))


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One chunk of choice 0."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [choice],
        **extra,
    }


def chunk_body(
    texts: list[str],
    *,
    reasoning: Sequence[str] = (),
    finish: str | None = "stop",
    usage: dict[str, Any] | None = None,
    done: bool = True,
) -> str:
    """A stream: reasoning pieces, text pieces, the finish chunk (unless ``finish`` is None),
    a usage chunk with empty ``choices`` (when given) and ``data: [DONE]``."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"reasoning_content": piece}) for piece in reasoning]
    chunks += [chunk({"content": piece}) for piece in texts]
    if finish is not None:
        chunks.append(chunk({}, finish))
    if usage is not None:
        chunks.append({**chunk({}), "choices": [], "usage": usage})
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines)


def chunk_data(body: str | bytes) -> list[dict[str, Any]]:
    """The JSON of every ``data:`` line of a stream (``[DONE]`` left out), parsed apart from
    the SDK."""
    out = []
    for piece in split_events(body):
        for line in piece.decode().splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[len("data: ") :]))
    return out
