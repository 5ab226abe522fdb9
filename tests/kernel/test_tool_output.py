"""A tool that prints a lot, in a real kernel: what reaches the page and the saved notebook is
bounded, the page gets new lines at most ten times a second, and the card's lines are there."""

from __future__ import annotations

import itertools
import json
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from .kernel import KernelDriver, ready_chat
from .test_persistence import _execute

pytestmark = pytest.mark.kernel

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

NOISY = textwrap.dedent(
    """
    from jupyter_turns import tool
    from jupyter_turns.providers.scripted import Delay, cycle, message, tool_call

    @tool(run="unattended")
    def noisy(lines: int, width: int = 0) -> str:
        '''Prints a lot.'''
        for i in range(lines):
            print(f"line {i} " + "x" * width)
        return "printed"

    @tool(run="unattended")
    def dump() -> str:
        '''Prints 10 MB at once.'''
        print("x" * 10_000_000)
        return "dumped"
    """
)


def _comm_msgs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["msg_type"] == "comm_msg"]


def test_100k_printed_lines_reach_the_page_bounded_and_coalesced(kernel: KernelDriver) -> None:
    kernel.run(NOISY)
    kernel.run(
        "script = [[Delay(1.0), *cycle(tool_call('noisy', {'lines': 100_000, 'width': 88},"
        " call_id='c1'))], cycle(message('Printed.'))]"
    )
    cell = kernel.execute("%%chat --provider scripted --script script\nPrint 10 MB in lines")
    widget = ready_chat(kernel)  # a view renders while the model thinks
    kernel.wait(lambda: cell.done, 120, "the turn to end")
    comm_msgs = _comm_msgs(cell.messages)
    tools_syncs = [m for m in comm_msgs if "tools" in m["content"]["data"].get("state", {})]
    progress = [
        m
        for m in comm_msgs
        if m["content"]["data"].get("method") == "custom"
        and m["content"]["data"]["content"].get("type") == "progress"
    ]
    # 100,000 lines of ~100 characters (10 MB) were printed
    assert len(tools_syncs) <= 3  # status changes only, never one per line
    times = [_sent_at(m) for m in progress]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert all(gap >= 0.09 for gap in gaps), gaps  # at most ten progress messages a second
    published = sum(len(json.dumps(m["content"])) for m in cell.messages)
    assert published < 300_000, published
    entry = widget.state["tools"]["c1"]
    assert entry["status"] == "done" and entry["progress_total"] == 100_000
    assert entry["progress"][0].startswith("line 0 ") and entry["progress"][-1].startswith(
        "line 99999 "
    )
    assert len(json.dumps(entry)) < 10_000


def _sent_at(message: dict[str, Any]) -> datetime:
    date = message["header"]["date"]
    return date if isinstance(date, datetime) else datetime.fromisoformat(str(date))


def test_a_10_mb_print_leaves_a_small_notebook(tmp_path: Path) -> None:
    cells = [
        "%load_ext jupyter_turns",
        NOISY,
        "script = [cycle(tool_call('dump', {}, call_id='c1')), cycle(message('Dumped.'))]",
        "%%chat --provider scripted --script script\nDump it",
    ]
    path = _execute(tmp_path, cells)
    size = path.stat().st_size
    assert size < 20_000, size  # 10 MB printed; nothing drew the card, nothing of it is kept
    notebook = json.loads(path.read_text())
    state = notebook["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    assert not [m for m in state.values() if m["state"].get("tools")]
