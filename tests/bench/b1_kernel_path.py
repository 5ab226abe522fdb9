"""B1 — the kernel path: ScriptedProvider → Chat → TurnCoordinator → EventBuilder → WidgetSink.

10,000 deltas of the 100 KB answer, yielded as fast as the ScriptedProvider yields them, into a
ChatWidget whose comm is a :class:`~tests.bench.common.CountingComm` (counted and JSON-encoded
like the kernel would, not sent). Per-delta cost = (turn time - the same run's bare ``''.join``
loop over the same strings) / 10,000. Then the rate cap: the same deltas paced over a few
seconds (and an unpaced stream that yields to the loop after every delta), messages per second.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_turns import Chat, PolicyPrompter
from jupyter_turns.providers.scripted import ScriptedProvider
from jupyter_turns.widget.chat_widget import ChatWidget
from jupyter_turns.widget.renderer import WidgetSink

from .common import Dist, Figure, Settings, answer, counting_comms, deltas, judge_max
from .scripts import answer_cycle, paced_sleep

N_DELTAS = 10_000
GOAL_US = 20.0
CAP = 60.0  # messages per second, "however fast deltas arrive"


def _bare_join(chunks: list[str]) -> float:
    start = time.perf_counter()
    buffer: list[str] = []
    for text in chunks:
        buffer.append(text)
    "".join(buffer)
    return time.perf_counter() - start


async def _turn(
    chunks: list[str],
    *,
    pause: float | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> dict[str, Any]:
    with counting_comms():
        widget = ChatWidget(thread="bench")
        widget._dispatch({"type": "ready"})  # a page shows it: its view rendered
        comm = widget.comm
        widget.bind(asyncio.get_running_loop())
        sink = WidgetSink(widget)  # the magic's default max_rate
        provider = ScriptedProvider([answer_cycle(chunks, pause)], sleep=sleep)
        chat = Chat(provider=provider, sink=sink, prompter=PolicyPrompter("allow"))
        opened = len(comm.log)
        gc.collect()
        start = time.perf_counter()
        result = await chat.send("bench")
        elapsed = time.perf_counter() - start
    assert result.text == "".join(chunks), "the answer arrived incomplete"
    log = comm.log[opened:]
    # when each delta message left, as the comm saw it (every path the sink sends by: the
    # draft's deltas go through the method it bound when it was made)
    custom = [
        t for t, (_, m, _) in zip(comm.times[opened:], log, strict=True) if m == "custom:delta"
    ]
    return {
        "elapsed": elapsed,
        "sink_messages": sink.messages_sent,
        "delta_messages": len(custom),
        "comm_messages": Counter(f"{t}:{m}" for t, m, _ in log),
        "comm_bytes": sum(size for _, _, size in log),
        "delta_times": custom,
        "start": start,
    }


def _rate(times: list[float], start: float, elapsed: float) -> dict[str, float]:
    """Messages per second: the average over the stream and the busiest 1-second window."""
    busiest = 0
    j = 0
    for i, t in enumerate(times):
        while times[j] < t - 1.0:
            j += 1
        busiest = max(busiest, i - j + 1)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return {
        "mean_per_s": len(times) / elapsed if elapsed else 0.0,
        "max_in_1s": float(busiest),
        "min_gap_ms": min(gaps) * 1e3 if gaps else float("nan"),
    }


def run(settings: Settings) -> list[Figure]:
    text = answer(100_000)
    chunks = deltas(text, N_DELTAS)
    repeats = settings.pick(7, 1)

    async def main() -> list[Figure]:
        await _turn(chunks[:500])  # warm up imports, pydantic, traitlets
        costs, sink_msgs, comm_msgs = [], [], []
        details: dict[str, Any] = {}
        for _ in range(repeats):
            bare = min(_bare_join(chunks) for _ in range(5))
            got = await _turn(chunks)
            costs.append((got["elapsed"] - bare) / N_DELTAS * 1e6)
            sink_msgs.append(got["sink_messages"])
            comm_msgs.append(sum(got["comm_messages"].values()))
            details = {
                "bare_join_us_total": bare * 1e6,
                "turn_ms": got["elapsed"] * 1e3,
                "comm_messages_by_kind": dict(got["comm_messages"]),
                "comm_json_bytes": got["comm_bytes"],
            }
        cost = Dist.of(costs)
        met, margin = judge_max(cost.median, GOAL_US)
        figures = [
            Figure(
                "B1",
                "kernel path, per delta (10k deltas, unpaced)",
                cost.median,
                "µs/delta",
                cost,
                f"≤ {GOAL_US:g} µs",
                met,
                margin,
                details=details,
            ),
            Figure(
                "B1",
                "sink messages for 10k unpaced deltas",
                float(sink_msgs[-1]),
                "msgs",
                Dist.of(sink_msgs),
                kind="info",
                details={"all_comm_messages": comm_msgs[-1]},
            ),
        ]

        # Rate cap: paced over a few seconds, and unpaced but yielding to the loop every delta.
        seconds = settings.pick(4.0, 1.0)
        paced_chunks = chunks[: settings.pick(10_000, 1_000)]
        pause = seconds / len(paced_chunks)
        sleep = paced_sleep()
        paced = await _turn(paced_chunks, pause=pause, sleep=sleep)
        # a stream of seconds sends deltas: none seen means this row measures nothing
        assert paced["delta_messages"], "no delta message reached the comm"
        rate = _rate(paced["delta_times"], paced["start"], paced["elapsed"])
        met, margin = judge_max(rate["max_in_1s"], CAP)
        figures.append(
            Figure(
                "B1",
                f"rate cap: {len(paced_chunks)} deltas paced over {seconds:g} s "
                f"({len(paced_chunks) / seconds:.0f}/s)",
                rate["max_in_1s"],
                "msgs in busiest 1 s",
                None,
                f"≤ ~{CAP:g} msgs/s",
                met,
                margin,
                details={
                    **rate,
                    "delta_messages": paced["delta_messages"],
                    "elapsed_s": paced["elapsed"],
                },
            )
        )
        yielding = await _turn(chunks, pause=0.0)  # asyncio.sleep(0): the loop runs between deltas
        rate = _rate(yielding["delta_times"], yielding["start"], yielding["elapsed"])
        met, margin = judge_max(rate["max_in_1s"], CAP)
        figures.append(
            Figure(
                "B1",
                "rate cap: 10k deltas unpaced, loop runs between deltas",
                rate["max_in_1s"],
                "msgs in busiest 1 s",
                None,
                f"≤ ~{CAP:g} msgs/s",
                met,
                margin,
                details={
                    **rate,
                    "delta_messages": yielding["delta_messages"],
                    "elapsed_s": yielding["elapsed"],
                    "per_delta_us": yielding["elapsed"] / N_DELTAS * 1e6,
                },
            )
        )
        return figures

    return asyncio.run(main())
