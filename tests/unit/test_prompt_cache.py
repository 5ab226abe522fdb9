"""The prompt-caching simulator against cases computed by hand, and the test server billing it.

Sizes: a user text block of n characters is ``{"_role":"user","text":"…","type":"text"}``,
n + 40 characters, so 4,000 characters are 1,010 tokens; an assistant one is n + 45; a system
block ``{"text":"…","type":"text"}`` is n + 25 (3,975 characters: 1,000 tokens).
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.support.anthropic_server import AnthropicTestServer, Reply
from tests.support.anthropic_sse import sse_text_response
from tests.support.prompt_cache import Bill, CacheRefused, PromptCache, tokens

CC = {"type": "ephemeral"}
SONNET = "claude-sonnet-5-5"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _system() -> list[dict[str, Any]]:
    return [{"type": "text", "text": "s" * 3975, "cache_control": CC}]


def _user(char: str, cached: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": char * 4000}
    if cached:
        block["cache_control"] = CC
    return {"role": "user", "content": [block]}


def _assistant() -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": "a" * 3995}]}


def _body(*messages: dict[str, Any], model: str = SONNET) -> dict[str, Any]:
    return {"model": model, "system": _system(), "messages": list(messages)}


def test_the_token_approximation_is_the_one_the_cases_use() -> None:
    assert (
        tokens({"type": "text", "text": "u" * 4000, "_role": "user", "cache_control": CC}) == 1010
    )
    assert tokens({"type": "text", "text": "a" * 3995, "_role": "assistant"}) == 1010
    assert tokens({"type": "text", "text": "s" * 3975}) == 1000


def test_a_growing_conversation_reads_its_earlier_prefix_and_writes_the_new_part() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    # the system prompt alone (1,000) is under Sonnet's 1,024 minimum: only the whole is written
    assert cache.bill(_body(_user("u", cached=True))) == Bill(0, 2010, 0)
    clock.now = 10
    assert cache.bill(_body(_user("u", cached=True))) == Bill(0, 0, 2010)
    clock.now = 20  # the next turn: the earlier prefix is found 2 blocks back
    grown = _body(_user("u"), _assistant(), _user("v", cached=True))
    assert cache.bill(grown) == Bill(0, 2020, 2010)


def test_entries_live_five_minutes_from_their_last_use() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    cache.bill(_body(_user("u", cached=True)))
    clock.now = 299  # a read at 299 s keeps it for 5 more minutes
    assert cache.bill(_body(_user("u", cached=True))) == Bill(0, 0, 2010)
    clock.now = 598
    assert cache.bill(_body(_user("u", cached=True))) == Bill(0, 0, 2010)
    clock.now = 898.5  # 300.5 s after the last read: gone, written again
    assert cache.bill(_body(_user("u", cached=True))) == Bill(0, 2010, 0)


def test_a_breakpoint_looks_back_20_blocks_and_no_further() -> None:
    def body(extra: int) -> dict[str, Any]:
        small: list[dict[str, Any]] = [{"type": "text", "text": "x" * 20} for _ in range(extra)]
        small[-1]["cache_control"] = CC
        later = {"role": "user", "content": small}
        return _body(_user("u"), _assistant(), later)

    for extra, read in ((19, 2010), (20, 0)):
        cache = PromptCache(Clock())
        cache.bill(_body(_user("u", cached=True)))  # cached: blocks 0..1
        bill = cache.bill(body(extra))
        # the breakpoint is at block 2 + extra; cached block 1 is extra + 1 blocks back
        total = 2010 + 1010 + 15 * extra
        assert bill == Bill(0, total - read, read), extra


def test_a_prefix_under_the_models_minimum_is_neither_written_nor_read() -> None:
    cache = PromptCache(Clock())
    haiku = "claude-3-5-haiku-20241022"  # 2,048 tokens
    assert cache.bill(_body(_user("u", cached=True), model=haiku)) == Bill(2010, 0, 0)
    assert cache.bill(_body(_user("u", cached=True), model=haiku)) == Bill(2010, 0, 0)
    opus = "claude-opus-4-6"  # 4,096 tokens
    assert cache.bill(_body(_user("u", cached=True), model=opus)) == Bill(2010, 0, 0)


def test_text_after_the_last_breakpoint_is_billed_at_the_full_rate() -> None:
    cache = PromptCache(Clock())
    body = _body(_user("u", cached=True), _assistant(), _user("v"))
    assert cache.bill(body) == Bill(2020, 2010, 0)


def test_a_top_level_cache_control_marks_the_last_block() -> None:
    cache = PromptCache(Clock())
    body = {"model": SONNET, "cache_control": CC, "messages": [_user("u"), _user("v")]}
    assert cache.bill(body) == Bill(0, 2020, 0)
    assert cache.bill(body) == Bill(0, 0, 2020)


def test_more_than_four_breakpoints_are_refused_and_caching_off_bills_everything() -> None:
    many = _body(*(_user(c, cached=True) for c in "uvwx"))  # + the system's: 5
    with pytest.raises(CacheRefused, match="maximum of 4"):
        PromptCache(Clock()).bill(many)
    off = PromptCache(Clock(), enabled=False)
    assert off.bill(_body(_user("u", cached=True))) == Bill(2010, 0, 0)


HOUR = {"type": "ephemeral", "ttl": "1h"}


def _hour_body(*messages: dict[str, Any]) -> dict[str, Any]:
    """``_body`` with every breakpoint kept an hour."""
    body = _body(*messages)
    for block in [*body["system"], *(b for m in body["messages"] for b in m["content"])]:
        if "cache_control" in block:
            block["cache_control"] = HOUR
    return body


def test_a_one_hour_entry_outlives_a_pause_a_five_minute_one_does_not() -> None:
    clock = Clock()
    five, hour = PromptCache(clock), PromptCache(clock)
    five.bill(_body(_user("u", cached=True)))
    assert hour.bill(_hour_body(_user("u", cached=True))) == Bill(0, 2010, 0, 2010)
    clock.now = 360  # six minutes later
    assert five.bill(_body(_user("u", cached=True))) == Bill(0, 2010, 0)
    assert hour.bill(_hour_body(_user("u", cached=True))) == Bill(0, 0, 2010)
    clock.now = 360 + 3599  # a read refreshes it for another hour
    assert hour.bill(_hour_body(_user("u", cached=True))) == Bill(0, 0, 2010)
    clock.now = 360 + 3599 + 3601
    assert hour.bill(_hour_body(_user("u", cached=True))) == Bill(0, 2010, 0, 2010)


def test_mixed_lifetimes_longer_first_split_the_writes_and_the_other_order_is_refused() -> None:
    body = _body(_user("u", cached=True), _assistant(), _user("v", cached=True))
    body["messages"][0]["content"][0]["cache_control"] = HOUR
    body["system"][0]["cache_control"] = HOUR
    # system + u (2,010) at 1 h; the assistant's and v's blocks (2,020) at 5 minutes
    assert PromptCache(Clock()).bill(body) == Bill(0, 4030, 0, 2010)
    body["messages"][0]["content"][0]["cache_control"] = CC
    body["messages"][2]["content"][0]["cache_control"] = HOUR  # 1 h after a 5-minute one
    with pytest.raises(CacheRefused, match="must not come after"):
        PromptCache(Clock()).bill(body)
    body["messages"][2]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "2h"}
    with pytest.raises(CacheRefused, match="'5m' or '1h'"):
        PromptCache(Clock()).bill(body)


async def test_the_test_server_reports_what_the_cache_bills_to_the_real_sdk() -> None:
    with AnthropicTestServer() as server:
        server.cache = PromptCache(Clock())
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
        usages = []
        for _ in range(2):
            server.enqueue(Reply.sse(sse_text_response(["ok"])))
            stream = await client.messages.create(
                max_tokens=10, stream=True, **_body(_user("u", cached=True))
            )
            async for event in stream:
                if event.type == "message_start":
                    usages.append(event.message.usage)
        server.assert_all_served()
    assert [
        (u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in usages
    ] == [
        (0, 2010, 0),
        (0, 0, 2010),
    ]
