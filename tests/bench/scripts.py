"""Scripted answers for the benchmarks; importable in the bench process and inside a kernel.

Pacing uses ScriptedProvider ``Delay`` items with an injected sleep that keeps an absolute
schedule (``paced_sleep``), so 2,000 pauses of 10 ms take 20 s, not 20 s plus 2,000 timer
overheads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from jupyter_turns.model.events import Finished, Flush, MessageDelta, Part, StreamEvent
from jupyter_turns.providers.base import Request
from jupyter_turns.providers.scripted import Delay, ScriptedProvider

__all__ = ["FirstDeltaProvider", "answer_cycle", "paced_provider", "paced_sleep"]


def answer_cycle(chunks: Sequence[str], pause: float | None = None, lead: float = 0.0) -> list[Any]:
    """One response: ``lead`` seconds of silence, then one message block, a pause per delta."""
    items: list[Any] = [Delay(lead)] if lead else []
    for text in chunks:
        items.append(Part(0, MessageDelta(text)))
        if pause is not None:
            items.append(Delay(pause))
    items += [Flush(0, {}), Finished("end_turn", None, {}, model="scripted")]
    return items


def paced_sleep() -> Callable[[float], Awaitable[None]]:
    """A sleep on an absolute schedule (it never bursts more than 50 ms to catch up)."""
    deadline: float | None = None

    async def sleep(seconds: float) -> None:
        nonlocal deadline
        now = asyncio.get_running_loop().time()
        deadline = now + seconds if deadline is None else max(deadline + seconds, now - 0.05)
        await asyncio.sleep(max(0.0, deadline - now))

    return sleep


def paced_provider(chunks: Sequence[str], rate: float) -> ScriptedProvider:
    """``chunks`` at ``rate`` deltas per second."""
    return ScriptedProvider([answer_cycle(chunks, 1.0 / rate)], sleep=paced_sleep())


class FirstDeltaProvider(ScriptedProvider):
    """A ScriptedProvider noting ``time.time()`` the moment each cycle yields its first Part."""

    def __init__(self, cycles: Any, **kwargs: Any) -> None:
        super().__init__(cycles, **kwargs)
        self.first_delta_at: list[float] = []

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return self._noting(super().stream(request))

    async def _noting(self, source: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
        first = True
        try:
            async for item in source:
                if first and item.kind == "part":
                    first = False
                    self.first_delta_at.append(time.time())
                yield item
        finally:
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()
