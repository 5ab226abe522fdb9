"""Every API fault for ``--provider openai``, through the real openai SDK and the whole turn:
recovered or a clear error, the conversation valid to send, every shown text kept, and the
saved record equal to what was shown."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from jupyter_turns import Chat
from jupyter_turns.providers.openai_responses import OpenAIResponsesProvider
from tests.support.anthropic_replies import Reply, split_events
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.openai_sse import (
    Text,
    for_responses,
    openai_error,
    responses_body,
    responses_event,
)

from .conftest import ShownSink

ANSWER = ["Fault", " tolerant", " answer", " ✓"]
USAGE = {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 4}
BODY = responses_body([Text(ANSWER)], usage=USAGE)
# events in BODY: 0 response.created, 1 output_item.added, 2.. the text deltas,
# 6 output_item.done, 7 response.completed
BEFORE_TEXT, AFTER_TEXT, ALL_BUT_LAST = 2, 4, 7


def _error_event_after(events: int, code: str) -> Reply:
    error = responses_event({"type": "error", "code": code, "message": "boom", "param": None})
    return for_responses(Reply.sse([*split_events(BODY)[:events], error.encode()]))


@dataclass(frozen=True)
class Fault:
    name: str
    make: Callable[[threading.Event], Reply]
    outcome: str  # "recovered": the answer arrives; "kept": the shown part is kept; "error"
    kept: int = 2  # deltas shown before the fault, for "kept"
    words: tuple[str, ...] = ()
    waits: tuple[float, ...] | None = None  # the retry's waits, when they are the server's
    partial: bool = True  # False: the message's item had ended (complete) before the fault


FAULTS = [
    Fault(
        "429 with retry-after",
        lambda r: openai_error(429, "slow down", code="rate_limit_exceeded", retry_after=3),
        "recovered",
        waits=(3.0,),
    ),
    Fault(
        "429 with retry-after-ms",
        lambda r: openai_error(429, "slow down", code="rate_limit_exceeded", retry_after_ms=1500),
        "recovered",
        waits=(1.5,),
    ),
    Fault("500", lambda r: openai_error(500, "oops", error_type="server_error"), "recovered"),
    Fault("503", lambda r: openai_error(503, "overloaded", error_type="server_error"), "recovered"),
    Fault("connection dropped", lambda r: for_responses(Reply.drop()), "recovered"),
    Fault(
        "reset before the first token",
        lambda r: for_responses(Reply.reset_after(BODY, BEFORE_TEXT)),
        "recovered",
    ),
    Fault(
        "reset after the first token",
        lambda r: for_responses(Reply.reset_after(BODY, AFTER_TEXT)),
        "kept",
    ),
    Fault(
        "FIN mid-body after text",
        lambda r: for_responses(Reply.close_after(BODY, AFTER_TEXT)),
        "kept",
    ),
    Fault(
        "no response.completed, before text",
        lambda r: for_responses(Reply.truncated(BODY, BEFORE_TEXT)),
        "recovered",
    ),
    Fault(
        "no response.completed, after all the text",
        lambda r: for_responses(Reply.truncated(BODY, ALL_BUT_LAST)),
        "kept",
        kept=4,
        partial=False,
    ),
    Fault(
        "error event before text",
        lambda r: _error_event_after(BEFORE_TEXT, "server_error"),
        "recovered",
    ),
    Fault(
        "error event after text", lambda r: _error_event_after(AFTER_TEXT, "server_error"), "kept"
    ),
    Fault(
        "hung stream before text",
        lambda r: for_responses(Reply.hang_after(BODY, BEFORE_TEXT, r, timeout=5)),
        "recovered",
    ),
    Fault(
        "401",
        lambda r: openai_error(401, "Incorrect API key provided", code="invalid_api_key"),
        "error",
        words=("401", "Incorrect API key", "%chat key openai", "OPENAI_API_KEY"),
    ),
    Fault(
        "429 insufficient_quota",
        lambda r: openai_error(429, "You exceeded your quota", code="insufficient_quota"),
        "error",
        words=("insufficient_quota", "retrying will not help", "billing"),
    ),
    Fault(
        "400 context_length_exceeded",
        lambda r: openai_error(
            400, "Your input exceeds the context window", code="context_length_exceeded"
        ),
        "error",
        words=("context window", "new thread", "%chat compact"),
    ),
    Fault(
        "404 model",
        lambda r: openai_error(404, "The model `gpt-9` does not exist", code="model_not_found"),
        "error",
        words=("404", "gpt-9", "model name"),
    ),
]


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _chat(server: AnthropicTestServer, sink: ShownSink, waits: list[float], **kw: Any) -> Chat:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    provider = OpenAIResponsesProvider(
        "gpt-5-mini", api_key="sk-test-openai", base_url=f"{server.url}/v1", timeout=0.5
    )
    provider.streaming = kw.pop("streaming", True)
    return Chat(
        provider=provider, sink=sink, on_boundary=sink.boundary, sleep=sleep, thinking="off"
    )


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_fault(server: AnthropicTestServer, fault: Fault) -> None:
    release = threading.Event()
    server.enqueue(fault.make(release), for_responses(Reply.sse(BODY)))
    sink, waits = ShownSink(), []
    turn = await _chat(server, sink, waits).send("Tell me something")

    chat_events = sink.events
    messages = [e for e in chat_events if e["kind"] == "message"]
    errors = [e for e in chat_events if e["kind"] == "error"]
    if fault.outcome == "recovered":
        assert turn.outcome == "complete" and not errors
        assert [m["content"] for m in messages] == ["".join(ANSWER)]
        assert sink.text() == "".join(ANSWER)  # nothing shown twice, nothing lost
        assert len(waits) == 1 and len(server.requests) == 2
        if fault.waits is not None:
            assert tuple(waits) == fault.waits
    elif fault.outcome == "kept":
        assert turn.outcome == "stopped" and len(server.requests) == 1  # no silent retry
        assert [m["content"] for m in messages] == ["".join(ANSWER[: fault.kept])]
        assert messages[0]["metadata"].get("partial", False) is fault.partial
        assert sink.text() == messages[0]["content"]
        assert errors, "the break is shown"
    else:
        assert turn.outcome == "error" and not messages and len(server.requests) == 1
        assert waits == []
        assert all(word in errors[-1]["message"] for word in fault.words), errors[-1]["message"]
        assert "sk-test-openai" not in errors[-1]["message"]
    assert sink.records[-1]["events"] == sink.events  # the saved record is what was shown
    release.set()


async def test_stream_off_retries_a_5xx_and_answers_from_one_json_body(
    server: AnthropicTestServer,
) -> None:
    final = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "".join(ANSWER), "annotations": []}],
            }
        ],
        "usage": USAGE,
    }
    server.enqueue(
        openai_error(502, "bad gateway", error_type="server_error"),
        for_responses(Reply.json(200, final)),
    )
    sink, waits = ShownSink(), []
    turn = await _chat(server, sink, waits, streaming=False).send("Tell me something")
    assert turn.outcome == "complete" and turn.text == "".join(ANSWER)
    assert len(waits) == 1 and [r.body["stream"] for r in server.requests] == [False, False]
    assert turn.usage.output_tokens == 4 and turn.cost_usd is not None
    [message] = [e for e in sink.events if e["kind"] == "message"]
    assert message["metadata"] == {"api": "openai-responses", "item_id": "msg_1"}
