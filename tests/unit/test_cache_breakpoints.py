"""The package's cache breakpoints keep a long tool turn served from the prompt cache (B7's
conversation through the real SDK and the caching simulator; deterministic, no timing)."""

from __future__ import annotations

from tests.bench.b7_cache import _measure


def test_a_20_cycle_tool_turn_is_read_from_the_cache_but_for_what_each_request_adds() -> None:
    cached = _measure("turn", enabled=True)
    off = _measure("turn", enabled=False)
    assert cached["requests"] == 20 and cached["all_input_tokens"] == off["all_input_tokens"]
    assert cached["full_rate_share"] <= 0.10
    assert cached["not_read_share"] <= 0.10  # each request's new part is written once
    assert cached["cost_usd"] < 0.5 * off["cost_usd"]
