"""Notebook code the kernel and browser tests run before a scripted ``%%chat`` turn.

``SETUP`` defines the ``add`` tool (it records each call in ``ran``), imports the scripted
provider's helpers, ``slow(items, pause)`` to stretch a scripted stream, and ``FileGate(name)``,
which holds a scripted stream where it stands until the test drops a file of that name in the
kernel's working folder (``lab.path(name)`` in a browser test): a test that needs a turn still
running while it does something waits on that, not on a stream long enough to outlast it.
``SLOW_TOOL`` (after SETUP) scripts a turn whose first cycle ends in a tool that never
returns, for the tests that kill a kernel between cycles.
"""

from __future__ import annotations

import textwrap

__all__ = ["SETUP", "SLOW_TOOL"]

SETUP = textwrap.dedent(
    '''\
    import asyncio
    import pathlib
    from jupyter_turns import ToolContext, tool
    from jupyter_turns.model.events import Usage
    from jupyter_turns.providers.scripted import (
        Delay, Gate, ScriptedProvider, cycle, message, reasoning, tool_call,
    )

    ran = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append((a, b))
        return a + b

    def slow(items, pause=0.05, every=1):
        """The cycle's items with a Delay after every `every`-th streamed part."""
        out, parts = [], 0
        for item in items:
            out.append(item)
            if getattr(item, "kind", "") == "part":
                parts += 1
                if parts % every == 0:
                    out.append(Delay(pause))
        return out

    class FileGate(Gate):
        """Holds the stream here until the file `name` is in the kernel's working folder."""

        def __init__(self, name):
            super().__init__()
            self.path = pathlib.Path(name)

        async def wait(self):
            while not self.path.exists():
                await asyncio.sleep(0.05)
            self.open()
            await super().wait()
    '''
)

SLOW_TOOL = textwrap.dedent(
    '''\
    @tool(run="unattended")
    async def slow_lookup(q: str) -> str:
        """Takes forever."""
        await asyncio.sleep(3600)
        return "never"

    script = [
        cycle(reasoning("Need a lookup."), message("Looking it up."),
              tool_call("slow_lookup", {"q": "x"}, call_id="call_1")),
        cycle(message("never reached")),
    ]
    '''
)
