"""Handing work to the kernel's event loop from any thread.

A comm handler may run on a subshell thread, SIGINT lands in the main thread between bytecodes,
a plain tool prints from a worker thread: none of them may touch the turn's objects directly.
They schedule a callback on the loop with :func:`call_soon_on`, which is safe from any thread
(and from a signal handler: it takes no lock) and does nothing once the loop is gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["call_soon_on"]


def call_soon_on(
    loop: asyncio.AbstractEventLoop | None, callback: Callable[..., object], *args: Any
) -> bool:
    """Schedule ``callback(*args)`` on ``loop`` from any thread; False (and nothing is
    scheduled) when there is no loop or it is closed."""
    if loop is None or loop.is_closed():
        return False
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # closed between the check and the call
        return False
    return True
