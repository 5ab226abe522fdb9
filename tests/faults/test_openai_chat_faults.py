"""Faults of an OpenAI-compatible Chat Completions server, through the real ``openai`` SDK and
the whole turn: recovered or a clear error, the conversation valid to send, every shown text
kept, and the saved record equal to what was shown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import pytest

from jupyter_turns import Chat
from jupyter_turns.providers.openai_chat import OpenAIChatProvider
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.openai_chat_replies import CHAT_PATH, chat_error, chat_reply, chunk_body

from .conftest import ShownSink

ANSWER = ["Fault", " tolerant", " answer", " ✓"]
USAGE = {"prompt_tokens": 12, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 0}}
BODY = chunk_body(ANSWER, usage=USAGE)
# chunks in BODY: 0 the role, 1.. the text, then finish_reason, usage, [DONE]
BEFORE_TEXT, AFTER_TEXT = 1, 3  # cut after the role chunk / after two pieces of text
NO_FINISH = chunk_body(ANSWER[:2], finish=None)  # well framed, [DONE] included: no finish_reason
MID_STREAM_ERROR = 'data: {"error": {"message": "Upstream overloaded", "code": 502}}\n\n'


def _here(reply: Reply) -> Reply:
    return replace(reply, expect=("POST", CHAT_PATH))


@dataclass(frozen=True)
class Fault:
    name: str
    reply: Callable[[], Reply]
    outcome: str  # "recovered": the answer arrives; "kept": the shown part is kept; "error"
    error_words: tuple[str, ...] = ()
    waits: tuple[float, ...] | None = None  # the retry waits, when the server chose them


FAULTS = [
    Fault(
        "429 with retry-after",
        lambda: chat_error(429, "Rate limit reached", code="rate_limit_exceeded", retry_after=7),
        "recovered",
        waits=(7.0,),
    ),
    Fault(
        "429 quota spent",
        lambda: chat_error(429, "You exceeded your current quota", code="insufficient_quota"),
        "error",
        ("429", "exceeded your current quota"),
    ),
    Fault("500", lambda: chat_error(500, "internal error"), "recovered"),
    Fault("503", lambda: chat_error(503, "loading model"), "recovered"),
    Fault("connection dropped", lambda: _here(Reply.drop()), "recovered"),
    Fault(
        "reset before the first token",
        lambda: _here(Reply.reset_after(BODY, BEFORE_TEXT)),
        "recovered",
    ),
    Fault("reset mid-stream", lambda: _here(Reply.reset_after(BODY, AFTER_TEXT)), "kept"),
    Fault("FIN mid-stream", lambda: _here(Reply.close_after(BODY, AFTER_TEXT)), "kept"),
    Fault(
        "no finish chunk, before text",
        lambda: chat_reply(chunk_body([], finish=None)),
        "recovered",
    ),
    Fault("no finish chunk, after text", lambda: chat_reply(NO_FINISH), "kept"),
    Fault(
        "error object mid-stream, before text",
        lambda: chat_reply(BODY.split("\n\n")[0] + "\n\n" + MID_STREAM_ERROR),
        "recovered",
    ),
    Fault(
        "401",
        lambda: chat_error(401, "Invalid API key", code="invalid_api_key"),
        "error",
        ("401", "Invalid API key", "%chat key openai"),
    ),
    Fault(
        "context too long",
        lambda: chat_error(
            400,
            "This model's maximum context length is 8192 tokens.",
            code="context_length_exceeded",
        ),
        "error",
        ("maximum context length", "start a new thread", "%chat compact"),
    ),
    Fault("404", lambda: chat_error(404, "model 'nope' not found"), "error", ("404", "--model")),
]


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        yield server


def _chat(server: AnthropicTestServer, sink: ShownSink, waits: list[float]) -> Chat:
    async def wait(seconds: float) -> None:
        waits.append(seconds)

    provider = OpenAIChatProvider("test-model", base_url=server.url + "/v1", timeout=0.5)
    return Chat(provider=provider, sink=sink, on_boundary=sink.boundary, sleep=wait, thinking="off")


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_fault(
    server: AnthropicTestServer, fault: Fault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.enqueue(fault.reply(), chat_reply(BODY))
    sink, waits = ShownSink(), []
    chat = _chat(server, sink, waits)
    turn = await chat.send("Tell me something")

    chat.conversation.check_sendable()  # valid to send, whatever happened
    messages = [e for e in sink.events if e["kind"] == "message"]
    errors = [e for e in sink.events if e["kind"] == "error"]
    if fault.outcome == "recovered":
        assert turn.outcome == "complete" and not errors
        assert [m["content"] for m in messages] == ["".join(ANSWER)]
        assert sink.text() == "".join(ANSWER)  # nothing shown twice, nothing lost
        assert turn.usage.input_tokens == 12 and turn.usage.output_tokens == 4
        assert len(waits) == 1 and (fault.waits is None or tuple(waits) == fault.waits)
    elif fault.outcome == "kept":
        assert turn.outcome == "stopped" and len(server.requests) == 1  # no silent retry
        assert [m["content"] for m in messages] == ["".join(ANSWER[:2])]
        assert messages[0]["metadata"] == {"partial": True}
        assert sink.text() == messages[0]["content"]  # every shown word kept
        assert errors, "the break is shown"
    else:
        assert turn.outcome == "error" and not messages and len(server.requests) == 1
        assert all(word in errors[-1]["message"] for word in fault.error_words), errors[-1]
        assert not waits
    # the saved record is exactly what was shown
    assert sink.records[-1]["events"] == sink.events


async def test_stream_off_recovers_from_a_5xx_and_answers_whole(
    server: AnthropicTestServer,
) -> None:
    completion = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "".join(ANSWER)},
                "finish_reason": "stop",
            }
        ],
        "usage": USAGE,
    }
    server.enqueue(chat_error(502, "bad gateway"), _here(Reply.json(200, completion)))
    sink, waits = ShownSink(), []
    chat = _chat(server, sink, waits)
    provider = chat.provider
    assert isinstance(provider, OpenAIChatProvider)
    provider.streaming = False  # --stream off
    turn = await chat.send("Tell me something")
    assert turn.outcome == "complete" and len(waits) == 1
    assert [e["content"] for e in sink.events if e["kind"] == "message"] == ["".join(ANSWER)]
    assert all(r.body["stream"] is False for r in server.requests)
    assert turn.usage.input_tokens == 12
    server.assert_all_served()
