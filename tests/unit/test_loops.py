"""call_soon_on: work handed to the turn's loop from another thread runs on the loop's thread."""

from __future__ import annotations

import asyncio
import threading

from jupyter_turns.loops import call_soon_on


async def test_a_callback_from_another_thread_runs_on_the_loops_thread() -> None:
    loop = asyncio.get_running_loop()
    ran = asyncio.Event()
    threads: list[int] = []

    def callback(value: str) -> None:
        threads.append(threading.get_ident())
        ran.set()

    scheduled: list[bool] = []
    worker = threading.Thread(target=lambda: scheduled.append(call_soon_on(loop, callback, "x")))
    worker.start()
    worker.join()
    await ran.wait()
    assert scheduled == [True] and threads == [threading.get_ident()]


def test_nothing_is_scheduled_without_an_open_loop() -> None:
    closed = asyncio.new_event_loop()
    closed.close()
    assert call_soon_on(None, print) is False
    assert call_soon_on(closed, print) is False
