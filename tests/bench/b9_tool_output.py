"""B9 — a tool that prints a lot: 100,000 lines, 10 MB in one print, 10 MB as 100,000 lines.

In process: a Chat whose scripted model calls one unattended plain tool (run in a worker
thread, as in a notebook) and a real WidgetSink feeding a ChatWidget on a counting comm — every
message the kernel would send to the page is serialized and counted, not sent. Per case: the
turn's time / the same tool body printing into a ``StringIO`` (the bare cost of the prints),
the messages and bytes sent to the page, how many of them re-sent the ``tools`` trait, and the
size of that trait at the end (what nbclient or ``saveState`` stores in the notebook).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from collections.abc import Callable
from typing import Any

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.widget.chat_widget import ChatWidget
from jupyter_turns.widget.renderer import WidgetSink

from .common import Dist, Figure, Settings, counting_comms, judge_max

BYTES_GOAL = 200_000  # bytes to the page for the whole turn, whatever the tool printed


def _lines(n: int, width: int = 0) -> Callable[[], None]:
    pad = "x" * width

    def body() -> None:
        for i in range(n):
            print(f"line {i} {pad}")

    return body


def _one_print(size: int) -> Callable[[], None]:
    def body() -> None:
        print("x" * size)

    return body


def _bare(body: Callable[[], None]) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        body()
    return time.perf_counter() - start


async def _turn(body: Callable[[], None]) -> dict[str, Any]:
    @tool(run="unattended")
    def noisy() -> str:
        """Print a lot."""
        body()
        return "done"

    provider = ScriptedProvider([cycle(tool_call("noisy", {})), cycle(message("Printed."))])
    with counting_comms() as comms:
        widget = ChatWidget(thread="main")
        widget._dispatch({"type": "ready"})  # a page shows it: its view rendered
        chat = Chat(
            provider=provider,
            tools=[noisy],
            prompter=PolicyPrompter("allow"),
            sink=WidgetSink(widget),
            run_mode="unattended",
        )
        start = time.perf_counter()
        result = await chat.send("print")
        elapsed = time.perf_counter() - start
    assert result.outcome == "complete", result
    log = [entry for comm in comms for entry in comm.log]
    return {
        "seconds": elapsed,
        "messages": len(log),
        "bytes": sum(size for _, _, size in log),
        "tools_updates": sum("tools" in method for _, method, _ in log),
        "tools_trait_bytes": len(json.dumps(widget.tools, ensure_ascii=False)),
    }


CASES: dict[str, Callable[[], None]] = {
    "100,000 printed lines": _lines(100_000),
    "10 MB in one print": _one_print(10_000_000),
    "10 MB as 100,000 lines of 100 chars": _lines(100_000, width=88),
}


def run(settings: Settings) -> list[Figure]:
    repeats = settings.pick(3, 1)

    async def main() -> list[Figure]:
        figures = []
        for name, body in CASES.items():
            runs = [await _turn(body) for _ in range(repeats)]
            bare = [_bare(body) for _ in range(repeats)]
            ratio = Dist.of([r["seconds"] / b for r, b in zip(runs, bare, strict=True)])
            last = runs[-1]
            details = {**last, "turn_s": Dist.of([r["seconds"] for r in runs]).__dict__}
            details["bare_s"] = Dist.of(bare).__dict__
            figures.append(
                Figure(
                    "B9",
                    f"{name}: turn time / the bare prints",
                    ratio.median,
                    "x",
                    ratio,
                    kind="info",
                    details=details,
                )
            )
            met, margin = judge_max(last["bytes"], BYTES_GOAL)
            figures.append(
                Figure(
                    "B9",
                    f"{name}: bytes to the page ({last['messages']} messages, "
                    f"{last['tools_updates']} tools-trait updates; trait at the end "
                    f"{last['tools_trait_bytes']:,} B)",
                    last["bytes"],
                    "B",
                    None,
                    f"≤ {BYTES_GOAL:,} B",
                    met,
                    margin,
                    details=details,
                )
            )
        return figures

    return asyncio.run(main())
