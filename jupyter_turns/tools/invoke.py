"""Calling a tool's function the way its flavour needs, under the tool's timeout.

An async function is awaited; an async generator is iterated, each item reported as a progress
line and the last one returned; a plain function runs in a worker thread (``asyncio.to_thread``
carries the context, so its prints are captured for its own card).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .registry import Tool
from .results import format_result

__all__ = ["invoke"]

_NOTHING = object()
_PROGRESS_CHARS = 2000  # a yielded value that is not text is shown at most this long


async def invoke(tool: Tool, kwargs: dict[str, Any], progress: Callable[[str], None]) -> Any:
    """The tool's return value; raises what the tool raises, TimeoutError past its timeout."""
    async with asyncio.timeout(tool.timeout):
        if tool.flavor == "async":
            return await tool.fn(**kwargs)
        if tool.flavor == "asyncgen":
            last: Any = _NOTHING
            async for item in tool.fn(**kwargs):
                last = item
                progress(item if isinstance(item, str) else format_result(item, _PROGRESS_CHARS))
            return None if last is _NOTHING else last
        return await asyncio.to_thread(tool.fn, **kwargs)
