"""The prompt cache's lifetime (issue 28): ``cache_ttl`` auto/5m/1h, the rule that reads the
thread's pauses, the ``ttl`` the Anthropic request carries (the same on every breakpoint, so a
1-hour one never follows a 5-minute one), the platforms that offer it, and the 1-hour writes'
usage and price."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jupyter_turns import Chat, PolicyPrompter
from jupyter_turns.engine.cache_life import cache_life
from jupyter_turns.model.events import ChatRequest, ConversationEvent, Message, Usage
from jupyter_turns.providers.anthropic import AnthropicProvider, build_params
from jupyter_turns.providers.anthropic_cloud import BedrockProvider
from jupyter_turns.providers.anthropic_stream import StreamAdapter
from jupyter_turns.providers.base import Request, ToolSpec
from jupyter_turns.providers.models import model_info
from jupyter_turns.providers.openai_chat_wire import build_params as chat_params
from jupyter_turns.providers.openai_responses import build_params as responses_params
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import sse_text_response
from tests.support.pauses import age
from tests.support.prompt_cache import PromptCache

SONNET = "claude-sonnet-5-5"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def _turns(*starts: float) -> list[ConversationEvent]:
    """A request at each start and its answer 10 s later."""
    events: list[ConversationEvent] = []
    for n, start in enumerate(starts):
        events.append(ChatRequest(content=f"q{n}", timestamp=_at(start)))
        events.append(Message(content=f"a{n}", timestamp=_at(start + 10)))
    return events


def test_auto_keeps_five_minutes_until_a_turn_comes_after_a_pause_of_more_than_four() -> None:
    assert cache_life("auto", _turns(0)) == "5m"
    assert cache_life("auto", _turns(0, 130, 260)) == "5m"  # 2 minutes apart
    assert cache_life("auto", _turns(0, 250)) == "5m"  # 240 s after the answer: not more
    assert cache_life("auto", _turns(0, 251)) == "1h"
    assert cache_life("auto", _turns(0, 400, 430, 460)) == "1h"  # from the first pause on
    assert cache_life("5m", _turns(0, 4000)) == "5m"
    assert cache_life("1h", _turns(0)) == "1h"
    sub = ChatRequest(content="nested", timestamp=_at(5000), parent="call-1")
    assert cache_life("auto", [*_turns(0), sub]) == "5m"  # a sub-agent's turn is no pause


def _request(ttl: Any) -> Request:
    return Request(
        events=(ChatRequest(content="hello"),),
        tools=(ToolSpec("a", "A", {"type": "object"}), ToolSpec("b", "B", {"type": "object"})),
        system="Be brief.",
        thinking="off",
        cache_ttl=ttl,
    )


def _controls(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The breakpoints in the cache's prefix order: tools, system, messages."""
    blocks = [*body.get("tools", []), *body.get("system", [])]
    blocks += [b for m in body["messages"] for b in m["content"] if isinstance(b, dict)]
    return [b["cache_control"] for b in blocks if "cache_control" in b]


def test_the_request_asks_every_breakpoint_for_the_same_lifetime() -> None:
    hour = _controls(build_params(_request("1h"), SONNET))
    assert hour == [{"type": "ephemeral", "ttl": "1h"}] * 3
    assert _controls(build_params(_request("5m"), SONNET)) == [{"type": "ephemeral"}] * 3
    unoffered = build_params(_request("1h"), SONNET, long_cache=False)
    assert _controls(unoffered) == [{"type": "ephemeral"}] * 3


def test_bedrock_offers_the_hour_from_claude_4_5_and_openai_sends_nothing() -> None:
    bedrock = BedrockProvider.__new__(BedrockProvider)  # no AWS credentials needed to ask
    assert bedrock.long_cache("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert bedrock.long_cache("global.anthropic.claude-opus-4-6-v1")
    assert not bedrock.long_cache("anthropic.claude-3-7-sonnet-20250219-v1:0")
    assert AnthropicProvider("claude-3-7-sonnet-latest", api_key="k").long_cache("claude-3-7")
    for params in (
        responses_params(_request("1h"), "gpt-5-mini"),
        chat_params(_request("1h"), "gpt-4o"),
    ):
        assert "ttl" not in json.dumps(params) and "1h" not in json.dumps(params)


@pytest.fixture
def server() -> Iterator[AnthropicTestServer]:
    with AnthropicTestServer() as server:
        server.cache = PromptCache(lambda: 0.0)  # billed: the SDK sees cache_creation
        yield server


async def _two_turns(server: AnthropicTestServer, pause: float, ttl: str) -> list[Any]:
    provider = AnthropicProvider(SONNET, api_key="k", base_url=server.url)
    system = "Be brief. " * 500  # over Sonnet's 1,024-token minimum: cached
    chat = Chat(provider=provider, prompter=PolicyPrompter("allow"), system=system)
    chat.config = replace(chat.config, cache_ttl=ttl)
    results = []
    for n in range(2):
        server.enqueue(Reply.sse(sse_text_response([f"answer {n}"], model=SONNET)))
        results.append(await chat.send(f"question {n}"))
        age(chat.conversation, pause)
    return results


@pytest.mark.parametrize(
    ("pause", "ttl", "second"),
    [(300.0, "auto", "1h"), (60.0, "auto", "5m"), (300.0, "5m", "5m"), (0.0, "1h", "1h")],
)
async def test_a_turn_after_a_pause_asks_for_the_hour(
    server: AnthropicTestServer, pause: float, ttl: str, second: str
) -> None:
    results = await _two_turns(server, pause, ttl)
    bodies = [r.body for r in server.requests if r.path.split("?")[0] == "/v1/messages"]
    lives = [[c.get("ttl", "5m") for c in _controls(b or {})] for b in bodies]
    assert lives[0] == ["1h" if ttl == "1h" else "5m"] * 2  # the system prompt, the request
    assert lives[1] == [second] * 2
    usage = results[1].usage  # the SDK's cache_creation read back: what went to the hour
    if second == "1h":
        assert usage.cache_creation_1h_input_tokens == usage.cache_creation_input_tokens > 0
    else:
        assert usage.cache_creation_1h_input_tokens == 0


def test_the_usage_of_a_one_hour_write_and_its_price() -> None:
    adapter = StreamAdapter()
    start = {
        "type": "message_start",
        "message": {
            "model": SONNET,
            "usage": {
                "input_tokens": 10,
                "cache_creation_input_tokens": 3000,
                "cache_read_input_tokens": 500,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": 1000,
                    "ephemeral_1h_input_tokens": 2000,
                },
                "output_tokens": 1,
            },
        },
    }
    list(adapter.feed(start))
    usage = adapter.usage
    assert usage == Usage(10, 1, 500, 3000, 2000)
    assert usage.as_dict()["cache_creation_1h_input_tokens"] == 2000
    assert "cache_creation_1h_input_tokens" not in Usage(1, 2, 3, 4).as_dict()  # saved if any
    price = model_info(SONNET)  # $3 per million input tokens
    cost = price.cost(usage)
    assert cost == pytest.approx((10 + 1000 * 1.25 + 2000 * 2 + 500 * 0.1) * 3 / 1e6 + 15 / 1e6)
    assert (usage + usage).cache_creation_1h_input_tokens == 4000
