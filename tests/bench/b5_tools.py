"""B5 — tools: 8 parallel ``await asyncio.sleep(0.5)`` tools vs one; Stop while all 8 run.

Each turn is a Chat with a ScriptedProvider: a cycle of N tool calls, then a closing message.
Parallel ratio = median turn time with 8 calls / median turn time with 1 call (whole turns, so
streaming and bookkeeping are included on both sides). Cancel latency = from
``Chat.interrupt("stop")`` (issued 0.1 s after the 8th tool started running) to the moment the
8th ``tool_call_response`` joined the conversation.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.model.sink import Appended, ToolUpdate, Update
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call

from .common import Dist, Figure, Settings, judge_max

SLEEP = 0.5
RATIO_GOAL = 1.2
CANCEL_GOAL_MS = 100.0


@tool(run="unattended")
async def nap(seconds: float = SLEEP) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "rested"


class _Watch:
    """A sink noting when tools start and when their responses join the conversation."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.running: set[str] = set()
        self.all_running = asyncio.Event()
        self.responses = 0
        self.all_answered_at: float | None = None

    def part(self, part: Any) -> None:
        pass

    def update(self, update: Update) -> None:
        if isinstance(update, ToolUpdate) and update.status == "running":
            self.running.add(update.call_id)
            if len(self.running) == self.n:
                self.all_running.set()
        elif isinstance(update, Appended):
            self.responses += sum(e.kind == "tool_call_response" for e in update.events)
            if self.responses >= self.n and self.all_answered_at is None:
                self.all_answered_at = time.perf_counter()


def _chat(n: int, watch: _Watch) -> Chat:
    calls = [tool_call("nap", {}) for _ in range(n)]
    provider = ScriptedProvider([cycle(*calls), cycle(message("All rested."))])
    return Chat(
        provider=provider,
        tools=[nap],
        prompter=PolicyPrompter("allow"),
        sink=watch,
        run_mode="unattended",
    )


async def _timed_turn(n: int) -> float:
    watch = _Watch(n)
    chat = _chat(n, watch)
    start = time.perf_counter()
    result = await chat.send("nap")
    elapsed = time.perf_counter() - start
    assert result.outcome == "complete" and watch.responses == n, result
    return elapsed


async def _cancel() -> dict[str, float]:
    watch = _Watch(8)
    chat = _chat(8, watch)
    turn = asyncio.create_task(chat.send("nap"))
    await watch.all_running.wait()
    started = time.perf_counter()
    await asyncio.sleep(0.1)
    asked = time.perf_counter()
    chat.interrupt("stop")
    result = await turn
    assert result.outcome == "stopped", result
    assert watch.all_answered_at is not None and watch.responses == 8
    cancelled = sum(
        e.kind == "tool_call_response" and e.status == "cancelled" for e in result.events
    )
    return {
        "latency_ms": (watch.all_answered_at - asked) * 1e3,
        "stop_at_s": asked - started,
        "cancelled": cancelled,
        "turn_end_ms": (time.perf_counter() - asked) * 1e3,
    }


def run(settings: Settings) -> list[Figure]:
    repeats = settings.pick(7, 1)

    async def main() -> list[Figure]:
        await _timed_turn(1)  # warm up
        one, eight, ratios = [], [], []
        for _ in range(repeats):
            t1 = await _timed_turn(1)
            t8 = await _timed_turn(8)
            one.append(t1)
            eight.append(t8)
            ratios.append(t8 / t1)
        ratio = Dist.of(ratios)
        met, margin = judge_max(ratio.median, RATIO_GOAL)
        figures = [
            Figure(
                "B5",
                "8 parallel tools / 1 tool (sleep 0.5 s each, whole turn)",
                ratio.median,
                "x",
                ratio,
                f"≤ {RATIO_GOAL:g}x",
                met,
                margin,
                details={
                    "one_tool_s": Dist.of(one).__dict__,
                    "eight_tools_s": Dist.of(eight).__dict__,
                },
            )
        ]
        runs = [await _cancel() for _ in range(repeats)]
        latency = Dist.of([r["latency_ms"] for r in runs])
        met, margin = judge_max(latency.median, CANCEL_GOAL_MS)
        figures.append(
            Figure(
                "B5",
                "Stop 8 running tools at 0.1 s → all 8 responses exist",
                latency.median,
                "ms",
                latency,
                f"≤ {CANCEL_GOAL_MS:g} ms",
                met,
                margin,
                details={
                    "cancelled_responses": runs[-1]["cancelled"],
                    "stop_issued_after_s": Dist.of([r["stop_at_s"] for r in runs]).__dict__,
                    "turn_end_ms": Dist.of([r["turn_end_ms"] for r in runs]).__dict__,
                },
            )
        )
        return figures

    return asyncio.run(main())
