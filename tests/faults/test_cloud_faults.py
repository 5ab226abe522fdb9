"""Faults on Amazon Bedrock and Vertex AI, through the real SDK cloud clients and the whole turn:
recovered before any text, kept (and not retried) after it, the conversation valid to send and
the saved record equal to what was shown. Bedrock's faults are its own: an HTTP 429
``ThrottlingException``, exception frames inside the AWS event stream, a connection dropped
between frames.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import google.oauth2.credentials
import pytest

from jupyter_turns import Chat
from jupyter_turns.providers.anthropic import MessagesProvider
from jupyter_turns.providers.anthropic_cloud import BedrockProvider, VertexProvider
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response
from tests.support.cloud_replies import (
    bedrock_error,
    bedrock_exception,
    bedrock_frames,
    bedrock_stream,
    vertex_error,
)

from .conftest import ShownSink

ANSWER = ["Fault", " tolerant", " answer", " ✓"]
BODY = sse_text_response(ANSWER)
BEFORE_TEXT, AFTER_TEXT = 2, 5  # events: 0 message_start, 1 block start, 2 ping, 3.. deltas
BEDROCK_ID = "anthropic.claude-haiku-4-5-20251001-v1:0"
VERTEX_ID = "claude-haiku-4-5@20251001"


def _bedrock_cut(events: int, *, drop: bool = False, exception: str | None = None) -> Reply:
    frames = bedrock_frames(BODY)[:events]
    if exception:
        frames.append(bedrock_exception(exception, "the model stream failed"))
    return bedrock_stream(frames, BEDROCK_ID, ending="close" if drop else "complete")


def _vertex_cut(events: int, *, drop: bool = False) -> Reply:
    cut = Reply.close_after(BODY, events) if drop else Reply.truncated(BODY, events)
    return replace(cut, expect=None)


@dataclass(frozen=True)
class Fault:
    name: str
    platform: str  # bedrock / vertex
    make: Callable[[], Reply]
    outcome: str  # recovered / kept


FAULTS = [
    Fault(
        "throttled",
        "bedrock",
        lambda: bedrock_error(429, "ThrottlingException", "Too many tokens", retry_after=1),
        "recovered",
    ),
    Fault(
        "503",
        "bedrock",
        lambda: bedrock_error(503, "ServiceUnavailableException", "busy"),
        "recovered",
    ),
    Fault(
        "dropped before text", "bedrock", lambda: _bedrock_cut(BEFORE_TEXT, drop=True), "recovered"
    ),
    Fault("no message_stop before text", "bedrock", lambda: _bedrock_cut(BEFORE_TEXT), "recovered"),
    Fault(
        "stream error frame before text",
        "bedrock",
        lambda: _bedrock_cut(BEFORE_TEXT, exception="modelStreamErrorException"),
        "recovered",
    ),
    Fault("dropped after text", "bedrock", lambda: _bedrock_cut(AFTER_TEXT, drop=True), "kept"),
    Fault("no message_stop after text", "bedrock", lambda: _bedrock_cut(AFTER_TEXT), "kept"),
    Fault(
        "throttling frame after text",
        "bedrock",
        lambda: _bedrock_cut(AFTER_TEXT, exception="throttlingException"),
        "kept",
    ),
    Fault(
        "resource exhausted",
        "vertex",
        lambda: vertex_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", retry_after=1),
        "recovered",
    ),
    Fault("500", "vertex", lambda: vertex_error(500, "INTERNAL", "internal"), "recovered"),
    Fault(
        "dropped before text", "vertex", lambda: _vertex_cut(BEFORE_TEXT, drop=True), "recovered"
    ),
    Fault("no message_stop before text", "vertex", lambda: _vertex_cut(BEFORE_TEXT), "recovered"),
    Fault("dropped after text", "vertex", lambda: _vertex_cut(AFTER_TEXT, drop=True), "kept"),
    Fault("no message_stop after text", "vertex", lambda: _vertex_cut(AFTER_TEXT), "kept"),
]


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake AWS credentials; nothing real read, no instance metadata asked."""
    for name in list(os.environ):
        if name.startswith(("AWS_", "ANTHROPIC_")):
            monkeypatch.delenv(name)
    empty = tmp_path / "empty"
    empty.write_text("")
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTONLY0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-not-real")


def _provider(platform: str, server: AnthropicTestServer) -> MessagesProvider:
    if platform == "bedrock":
        return BedrockProvider(BEDROCK_ID, base_url=server.url, region="us-west-2", timeout=0.5)
    token = google.oauth2.credentials.Credentials(token="fake-token")
    return VertexProvider(
        VERTEX_ID,
        base_url=server.url,
        region="us-east5",
        project="test-project",
        credentials=token,
        timeout=0.5,
    )


def _answer(platform: str) -> Reply:
    if platform == "bedrock":
        return bedrock_stream(bedrock_frames(BODY), BEDROCK_ID)
    return replace(Reply.sse(BODY), expect=None)


async def _no_wait(seconds: float) -> None:
    return None


@pytest.mark.parametrize("fault", FAULTS, ids=[f"{f.platform}-{f.name}" for f in FAULTS])
async def test_cloud_fault(server: AnthropicTestServer, fault: Fault) -> None:
    server.enqueue(fault.make())
    if fault.outcome == "recovered":
        server.enqueue(_answer(fault.platform))
    sink = ShownSink()
    chat = Chat(
        provider=_provider(fault.platform, server),
        sink=sink,
        on_boundary=sink.boundary,
        sleep=_no_wait,
        thinking="off",
    )
    turn = await chat.send("Tell me something")

    chat.conversation.check_sendable()
    messages = [e for e in sink.events if e["kind"] == "message"]
    errors = [e for e in sink.events if e["kind"] == "error"]
    if fault.outcome == "recovered":
        assert turn.outcome == "complete" and not errors and len(server.requests) == 2
        assert [m["content"] for m in messages] == ["".join(ANSWER)]
        assert sink.text() == "".join(ANSWER)
    else:
        assert turn.outcome == "stopped" and len(server.requests) == 1
        assert [m["content"] for m in messages] == ["".join(ANSWER[:2])]
        assert sink.text() == messages[0]["content"] and errors
    assert sink.records[-1]["events"] == sink.events
    assert all(r.headers["host"].startswith("127.0.0.1:") for r in server.requests)
    server.assert_all_served()
