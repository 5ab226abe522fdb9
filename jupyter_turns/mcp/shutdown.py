"""Closing the kernel's MCP servers when the kernel shuts down or restarts.

ipykernel handles ``shutdown_request`` on its control thread and then stops the loops, so
nothing on the kernel's loop runs after it. The servers are closed first, on the kernel's own
loop (where their holder tasks live), before ipykernel's handler runs: a stdio server gets the
protocol's shutdown (stdin closed, then SIGTERM, SIGKILL), an HTTP session its DELETE. Without
a kernel (plain IPython) a stdio server sees its stdin close when the process exits.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any

from .connection import CLOSE_TIMEOUT

if TYPE_CHECKING:
    from .servers import McpServers

__all__ = ["close_at_kernel_shutdown"]

_log = logging.getLogger(__name__)


def close_at_kernel_shutdown(servers: McpServers) -> bool:
    """Wrap the kernel's ``shutdown_request`` handler so it closes ``servers`` first; whether
    there was a kernel to hook into. Call it on the kernel's loop."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    handlers = getattr(kernel, "control_handlers", None)
    if not isinstance(handlers, dict) or "shutdown_request" not in handlers:
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not on the kernel's loop: the next connection tries again
        return False
    original = handlers["shutdown_request"]

    async def shutdown_request(stream: Any, ident: Any, parent: Any) -> None:
        try:
            closing = asyncio.run_coroutine_threadsafe(servers.close_all(), loop)
            await asyncio.wait_for(asyncio.wrap_future(closing), CLOSE_TIMEOUT + 1)
        except (TimeoutError, RuntimeError) as exc:  # a stuck server, a loop already gone
            _log.warning("MCP servers not closed at kernel shutdown: %r", exc)
        result = original(stream, ident, parent)
        if inspect.isawaitable(result):
            await result

    handlers["shutdown_request"] = shutdown_request
    return True
