"""B7 — cache hits: how much of each request's input the prompt cache serves.

In process: the real ``AnthropicProvider`` (the real SDK) against the local API test server,
whose usage is billed by the prompt-caching simulator (``tests/support/prompt_cache.py``: the
documented breakpoint, lookback, minimum-length and lifetime rules, on a simulated clock).
Two conversations on ``claude-sonnet-5-5`` with a system prompt and the tools a notebook thread
offers by default (the built-in notebook tools and ``python``) plus one ``@tool``:

- a 20-cycle tool turn: 19 answers that call a tool (each result a ~1.5 KB DataFrame summary),
  then the answer; 3 s between requests;
- a 10-turn thread with tool results: each turn one tool call and an answer; 60 s between turns,
  and the same with 2 and with 6 minutes between turns (past the 5-minute lifetime: with
  ``cache_ttl`` "auto", the default, the thread asks for the 1-hour lifetime from its first such
  pause on; the 1- and 2-minute threads stay on 5 minutes).

A pause between turns moves the cache's simulated clock and ages the thread's events by as much
(their timestamps are what the ``auto`` rule reads, :mod:`jupyter_turns.engine.cache_life`).

Per conversation: the share of input tokens billed at the full (uncached) rate (the goal), the
share not read from the cache (full rate and cache writes), and the estimated cost with the
package's cache breakpoints and with caching off (the same conversation billed by a cache that
is disabled: the baseline, in the same run); the 6-minute thread has goals of its own (≤ 15 %
not read from the cache, cost ≤ 0.40x caching off). Deterministic: no timings.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.engine.cache_life import CacheTtl
from jupyter_turns.kernel_tools.builtin import BUILTINS, DEFAULT
from jupyter_turns.model.events import Usage
from jupyter_turns.providers.anthropic import AnthropicProvider
from jupyter_turns.providers.models import model_info
from jupyter_turns.reading.sources import NotebookReader
from tests.support.anthropic_replies import Reply
from tests.support.anthropic_server import AnthropicTestServer
from tests.support.anthropic_sse import Text, ToolUse, sse_message
from tests.support.pauses import age
from tests.support.prompt_cache import PromptCache

from .common import Figure, Settings, judge_max

MODEL = "claude-sonnet-5-5"
GOAL = 0.10
PAUSED_NOT_READ, PAUSED_COST = 0.15, 0.40  # the 6-minute thread's goals (issue 28)
SYSTEM = (
    "You are a data analysis assistant working inside the user's Jupyter notebook. Prefer "
    "reading the notebook's cells and variables over guessing; run code only when asked or "
    "when a number must be computed; explain results briefly and show the code you ran. "
) * 4


def _summary(n: int) -> str:
    rows = "\n".join(
        f"{i:>4}  station_{(n * 7 + i) % 31:02d}  {12.5 + i * 0.37:7.2f}  {980 + i * 3:5d}  "
        f"{'rain' if (n + i) % 3 else 'dry':>5}"
        for i in range(24)
    )
    return f"DataFrame 8,760×5 (call {n})\n   #  station      mm      hPa  kind\n{rows}"


def _tools() -> list[Any]:
    """What a notebook thread offers by default (the built-in notebook tools, and ``python``),
    plus the user's own ``@tool`` the scripted model calls."""
    reader = NotebookReader({})
    builtins = [BUILTINS[name](reader) for name in (*DEFAULT, "python")]

    @tool(run="unattended")
    def describe(name: str) -> str:
        """Summarize a DataFrame in the notebook: shape, dtypes and the first rows.

        Args:
            name: the variable's name.
        """
        return _summary(len(name))

    return [*builtins, describe]


class _Clock:
    """The cache's clock: moves on ``step`` seconds at every request it bills."""

    def __init__(self) -> None:
        self.now = 0.0
        self.step = 3.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _calling(n: int) -> Reply:
    text = Text([f"Let me look at the data again, step {n}."])
    use = ToolUse("describe", {"name": f"df{n % 5}"}, id=f"toolu_b7_{n:04d}")
    body = sse_message([text, use], stop_reason="tool_use", output_tokens=60, model=MODEL)
    return Reply.sse(body)


def _answer(n: int) -> Reply:
    words = " ".join(f"finding-{n}-{i}" for i in range(120))
    return Reply.sse(sse_message([Text([words])], output_tokens=300, model=MODEL))


async def _run(scenario: str, cache: PromptCache, cache_ttl: CacheTtl) -> int:
    """Play the conversation; its output tokens."""
    clock = cache.clock
    assert isinstance(clock, _Clock)
    with AnthropicTestServer() as server:
        server.cache = cache
        provider = AnthropicProvider(MODEL, api_key="bench-key", base_url=server.url)
        chat = Chat(
            provider=provider,
            tools=_tools(),
            prompter=PolicyPrompter("allow"),
            system=SYSTEM,
            thinking="off",
            max_cycles=25,
            cache_ttl=cache_ttl,
        )
        output = 0
        if scenario == "turn":
            server.enqueue(*(_calling(n) for n in range(19)), _answer(0))
            result = await chat.send("Analyse the rainfall frames df0..df4 and compare them.")
            assert result.outcome == "complete" and result.cycles == 20, result
            output += result.usage.output_tokens
        else:
            for turn in range(10):
                server.enqueue(_calling(turn), _answer(turn))
                pause = PAUSES[scenario]  # the user reads, asks again
                clock.now += pause
                age(chat.conversation, pause)
                result = await chat.send(f"Now look at station {turn}: what stands out?")
                assert result.outcome == "complete" and result.cycles == 2, result
                output += result.usage.output_tokens
        server.assert_all_served()
        return output


def _measure(scenario: str, enabled: bool, cache_ttl: CacheTtl = "auto") -> dict[str, Any]:
    clock = _Clock()
    bills: list[dict[str, int]] = []
    cache = PromptCache(clock, enabled=enabled)
    original = cache.bill

    def bill(body: dict[str, Any]) -> Any:
        billed = original(body)
        bills.append(billed.__dict__.copy())
        return billed

    cache.bill = bill  # type: ignore[method-assign]
    output = asyncio.run(_run(scenario, cache, cache_ttl))
    total = {k: sum(b[k] for b in bills) for k in bills[0]}
    billed = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    inputs = sum(total[k] for k in billed)
    price = model_info(MODEL)
    cost = price.cost(Usage(total["input_tokens"], output, total["cache_read_input_tokens"],
                            total["cache_creation_input_tokens"],
                            total["cache_creation_1h_input_tokens"]))  # fmt: skip
    return {
        "requests": len(bills),
        "all_input_tokens": inputs,
        **total,
        "full_rate_share": total["input_tokens"] / inputs,
        "not_read_share": (total["input_tokens"] + total["cache_creation_input_tokens"]) / inputs,
        "cost_usd": cost,
    }


SCENARIOS: dict[str, str] = {
    "turn": "20-cycle tool turn",
    "thread": "10-turn thread with tool results",
    "brisk": "the same thread, 2 minutes between turns",
    "slow": "the same thread, 6 minutes between turns (5-minute entries expire)",
}
PAUSES = {"thread": 60.0, "brisk": 120.0, "slow": 360.0}  # seconds between turns


def run(settings: Settings) -> list[Figure]:
    del settings  # deterministic: the same figures in quick mode
    figures = []
    for scenario, label in SCENARIOS.items():
        cached = _measure(scenario, enabled=True)
        off = _measure(scenario, enabled=False)
        figures += _figures(label, cached, off, paused=scenario == "slow")
    return figures


def _figures(
    label: str, cached: dict[str, Any], off: dict[str, Any], *, paused: bool
) -> list[Figure]:
    """A conversation's three rows: billed at the full rate (the goal of the conversations
    without long pauses), not read from the cache and the cost against caching off (the goals
    of the 6-minute thread)."""
    share, not_read = cached["full_rate_share"], cached["not_read_share"]
    ratio = cached["cost_usd"] / off["cost_usd"]
    details = {"cached": cached, "caching_off": off}
    full = (None, "") if paused else judge_max(share, GOAL)
    unread = judge_max(not_read, PAUSED_NOT_READ) if paused else (None, "")
    cost = judge_max(ratio, PAUSED_COST) if paused else (None, "")
    rows = [
        (
            f"input tokens billed at the full rate ({cached['requests']} requests, "
            f"{cached['all_input_tokens']:,} input tokens)",
            share * 100, "%", f"≤ {GOAL:.0%}", full,
        ),
        (
            "not read from the cache (full rate + cache writes; "
            f"{cached['cache_creation_1h_input_tokens']:,} written for 1 h)",
            not_read * 100, "%", f"≤ {PAUSED_NOT_READ:.0%}", unread,
        ),
        (
            "estimated cost with the breakpoints / with caching off "
            f"(${cached['cost_usd']:.3f} / ${off['cost_usd']:.3f})",
            ratio, "x", f"≤ {PAUSED_COST:.2f}x", cost,
        ),
    ]  # fmt: skip
    return [
        Figure(
            "B7",
            f"{label}: {name}",
            value,
            unit,
            None,
            goal if met is not None else "",
            met,
            margin,
            kind="goal" if met is not None else "info",
            details=details,
        )
        for name, value, unit, goal, (met, margin) in rows
    ]
