"""Every API fault, through the real SDK and the whole turn: recovered or a clear error, the
conversation valid to send, every shown text kept, and the saved record equal to what was shown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from jupyter_turns import Chat
from jupyter_turns.providers.anthropic import AnthropicProvider
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response

from .conftest import ShownSink

ANSWER = ["Fault", " tolerant", " answer", " ✓"]
BODY = sse_text_response(ANSWER)
# event numbers in BODY: 0 message_start, 1 block start, 2 ping, 3.. text deltas
BEFORE_TEXT, AFTER_TEXT = 2, 5  # cut after the ping / after two deltas


@dataclass(frozen=True)
class Fault:
    name: str
    make: Callable[[threading.Event], Reply]  # gets the event that would release a hang
    outcome: str  # "recovered": the answer arrives; "kept": the shown part is kept; "error"
    error_words: tuple[str, ...] = ()


FAULTS = [
    Fault("429 with retry-after", lambda release: Reply.error(429, retry_after=1), "recovered"),
    Fault("429 without retry-after", lambda release: Reply.error(429), "recovered"),
    Fault("529 overloaded", lambda release: Reply.error(529), "recovered"),
    Fault("500", lambda release: Reply.error(500), "recovered"),
    Fault("503", lambda release: Reply.error(503), "recovered"),
    Fault("connection dropped", lambda release: Reply.drop(), "recovered"),
    Fault(
        "reset before the first token",
        lambda release: Reply.reset_after(BODY, BEFORE_TEXT),
        "recovered",
    ),
    Fault(
        "reset after the first token", lambda release: Reply.reset_after(BODY, AFTER_TEXT), "kept"
    ),
    Fault("FIN mid-body after text", lambda release: Reply.close_after(BODY, AFTER_TEXT), "kept"),
    Fault(
        "no message_stop, before text",
        lambda release: Reply.truncated(BODY, BEFORE_TEXT),
        "recovered",
    ),
    Fault("no message_stop, after text", lambda release: Reply.truncated(BODY, AFTER_TEXT), "kept"),
    Fault(
        "error event before text",
        lambda release: Reply.error_event_after(BODY, BEFORE_TEXT),
        "recovered",
    ),
    Fault(
        "error event after text", lambda release: Reply.error_event_after(BODY, AFTER_TEXT), "kept"
    ),
    Fault(
        "hung stream before text",
        lambda release: Reply.hang_after(BODY, BEFORE_TEXT, release, timeout=5),
        "recovered",
    ),
    Fault(
        "hung stream after text",
        lambda release: Reply.hang_after(BODY, AFTER_TEXT, release, timeout=5),
        "kept",
    ),
    Fault(
        "401",
        lambda release: Reply.error(401, "invalid x-api-key"),
        "error",
        ("401", "invalid x-api-key", "ANTHROPIC_API_KEY"),
    ),
    Fault(
        "400",
        lambda release: Reply.error(400, "messages: bad block"),
        "error",
        ("400", "messages: bad block"),
    ),
    Fault("404", lambda release: Reply.error(404, "model: nope"), "error", ("404", "model: nope")),
    Fault(
        "413",
        lambda release: Reply.error(413, "request too large"),
        "error",
        ("413", "request too large"),
    ),
]


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


async def _no_wait(seconds: float) -> None:
    return None


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_fault(server: AnthropicTestServer, fault: Fault) -> None:
    release = threading.Event()  # hung streams resume only when the test ends
    server.enqueue(fault.make(release), Reply.sse(BODY))
    sink = ShownSink()
    provider = AnthropicProvider(
        "claude-haiku-4-5", api_key="test-key", base_url=server.url, timeout=0.5
    )
    chat = Chat(
        provider=provider, sink=sink, on_boundary=sink.boundary, sleep=_no_wait, thinking="off"
    )
    turn = await chat.send("Tell me something")

    chat.conversation.check_sendable()  # valid to send, whatever happened
    messages = [e for e in sink.events if e["kind"] == "message"]
    errors = [e for e in sink.events if e["kind"] == "error"]
    if fault.outcome == "recovered":
        assert turn.outcome == "complete" and not errors
        assert [m["content"] for m in messages] == ["".join(ANSWER)]
        assert sink.text() == "".join(ANSWER)  # nothing shown twice, nothing lost
    elif fault.outcome == "kept":
        assert turn.outcome == "stopped" and len(server.requests) == 1  # no silent retry
        assert [m["content"] for m in messages] == ["".join(ANSWER[:2])]
        assert messages[0]["metadata"] == {"partial": True}
        assert sink.text() == messages[0]["content"]  # every shown word kept
        assert errors, "the break is shown"
    else:
        assert turn.outcome == "error" and not messages and len(server.requests) == 1
        assert all(word in errors[-1]["message"] for word in fault.error_words)
    # the saved record is exactly what was shown
    assert sink.records[-1]["events"] == sink.events
    release.set()
