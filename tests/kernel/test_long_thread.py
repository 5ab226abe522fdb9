"""A long notebook thread: what a turn sends does not grow with the thread (B10 measures more)."""

from __future__ import annotations

import json
import statistics

import pytest

from .kernel import KernelDriver

pytestmark = pytest.mark.kernel

SCRIPT = """
from jupyter_turns import tool
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call

@tool(run="unattended")
def lookup(key: str) -> str:
    '''Look a key up.'''
    return f"the value of {key}"

script = [
    c
    for k in range(40)
    for c in (cycle(tool_call("lookup", {"key": f"k{k}"})), cycle(message("An answer. " * 150)))
]
"""


def _sent(cell_messages: list[dict]) -> int:  # type: ignore[type-arg]
    """The JSON bytes of everything the kernel published for a cell."""
    return sum(len(json.dumps(m["content"], default=str)) for m in cell_messages)


def test_a_turn_late_in_a_long_thread_sends_what_an_early_one_does(kernel: KernelDriver) -> None:
    kernel.run(SCRIPT)
    first = kernel.run("%%chat --provider scripted --script script --tools unattended\nQ0")
    assert "An answer." in first.outputs[0]["data"]["text/html"]
    sizes = [_sent(kernel.run(f"%%chat --script script\nQ{k}").messages) for k in range(1, 40)]
    early, late = statistics.median(sizes[2:7]), statistics.median(sizes[-5:])
    assert late <= 1.1 * early, (early, late)  # flat: no turn resends the thread
