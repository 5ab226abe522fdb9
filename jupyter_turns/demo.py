"""A headless demo: one scripted turn with reasoning, two parallel tools and an answer.

Run ``python -m jupyter_turns.demo``. It uses ScriptedProvider (no network, no API key) and a
policy prompter that approves the tool calls, printing the turn as it streams.
"""

from __future__ import annotations

import asyncio
import statistics

from .chat import Chat
from .prompter import PolicyPrompter
from .providers.scripted import ScriptedProvider, cycle, message, reasoning, tool_call
from .sink import PrintSink
from .tools import tool

__all__ = ["main"]


@tool
async def mean(values: list[float]) -> float:
    """The arithmetic mean of ``values``."""
    await asyncio.sleep(0.2)
    return statistics.fmean(values)


@tool
async def spread(values: list[float]) -> float:
    """The population standard deviation of ``values``."""
    await asyncio.sleep(0.1)
    return statistics.pstdev(values)


def _script() -> ScriptedProvider:
    data = {"values": [3, 5, 8, 13]}
    return ScriptedProvider(
        [
            cycle(
                reasoning("The user wants a summary; I need the mean and the spread."),
                message("I'll compute both statistics in parallel."),
                tool_call("mean", data, call_id="call_mean"),
                tool_call("spread", data, call_id="call_spread"),
            ),
            cycle(message("The mean is **7.25** and the standard deviation is about **3.77**.")),
        ]
    )


async def _run() -> None:
    chat = Chat(
        provider=_script(),
        tools=[mean, spread],
        prompter=PolicyPrompter("allow"),
        sink=PrintSink(),
    )
    turn = await chat.send("Summarize 3, 5, 8 and 13.")
    print(f"\n--- turn {turn.outcome} after {turn.cycles} cycles: {' → '.join(turn.kinds)}")


def main() -> None:
    asyncio.run(_run())


if __name__ == "__main__":
    main()
