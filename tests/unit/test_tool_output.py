"""Bounded tool output: head and tail kept with a note of what was cut, coalesced to the page."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from typing import Any

from jupyter_turns import Chat, PrintSink, RecordingSink, tool
from jupyter_turns.model.sink import ToolUpdate
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.tools.output import HEAD_LINES, LINE_CHARS, TAIL_LINES, ToolOutput
from jupyter_turns.widget.chat_widget import ChatWidget
from jupyter_turns.widget.renderer import WidgetSink
from tests.bench.common import counting_comms

from .helpers import page_widget


def test_many_lines_keep_the_head_and_the_tail_and_count_the_rest() -> None:
    output = ToolOutput()
    for i in range(100_000):
        output.write("stdout", f"line {i}")
        output.write("stdout", "\n")
    snap = output.snapshot()
    assert snap.total == 100_000 and snap.cut == 100_000 - HEAD_LINES - TAIL_LINES
    assert snap.head == tuple(f"line {i}" for i in range(HEAD_LINES))
    assert snap.tail == tuple(f"line {i}" for i in range(100_000 - TAIL_LINES, 100_000))
    lines = snap.lines()
    assert lines[HEAD_LINES] == f"… {snap.cut:,} more lines not shown …"
    assert len(lines) == HEAD_LINES + 1 + TAIL_LINES


def test_a_huge_line_is_cut_with_a_note_without_holding_it() -> None:
    output = ToolOutput()
    output.write("stdout", "x" * 10_000_000)  # no newline yet: held, but only its start
    output.write("stdout", "y" * 5 + "\nnext")
    output.finish()
    first, second = output.snapshot().lines()
    assert first == "x" * LINE_CHARS + f"… [{10_000_005 - LINE_CHARS:,} more characters]"
    assert second == "next"
    held = output._open["stdout"]  # the unfinished line kept at most LINE_CHARS characters
    assert held.length == 0 and held.kept == []


def test_streams_keep_their_own_unfinished_lines() -> None:
    output = ToolOutput()
    output.write("stdout", "progress: ")
    output.write("stderr", "warn")
    output.write("stdout", "50%\n")
    output.write("stderr", "ing\n")
    output.line("from ctx.progress\nsecond line")
    assert output.snapshot().lines() == [
        "progress: 50%",
        "[stderr] warning",
        "from ctx.progress",
        "second line",
    ]


def test_runs_from_give_only_the_kept_lines_not_seen_yet() -> None:
    output = ToolOutput(head=2, tail=3)
    for i in range(10):
        output.line(f"l{i}")
    snap = output.snapshot()
    assert snap.runs_from(0) == [(0, ["l0", "l1"]), (7, ["l7", "l8", "l9"])]
    assert snap.runs_from(1) == [(1, ["l1"]), (7, ["l7", "l8", "l9"])]
    assert snap.runs_from(8) == [(8, ["l8", "l9"])]
    assert snap.runs_from(10) == []


def test_writes_from_many_threads_are_all_counted() -> None:
    output = ToolOutput()

    def spam(n: int) -> None:
        for i in range(5_000):
            output.write("stdout", f"t{n} {i}\n")

    threads = [threading.Thread(target=spam, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert output.snapshot().total == 20_000


def _noisy_chat(lines: int, sink: object) -> Chat:
    @tool(run="unattended")
    def noisy() -> str:
        """Prints a lot."""
        for i in range(lines):
            print(f"line {i}")
        return "done"

    provider = ScriptedProvider([cycle(tool_call("noisy", {}, call_id="c1")), cycle(message("ok"))])
    return Chat(provider=provider, tools=[noisy], sink=sink)  # type: ignore[arg-type]


async def test_100k_printed_lines_cost_the_page_a_bounded_few_messages() -> None:
    loop = asyncio.get_running_loop()
    with counting_comms() as comms:
        widget = ChatWidget()
        start = loop.time()
        turn = await _noisy_chat(100_000, WidgetSink(widget)).send("go")
        seconds = loop.time() - start
    assert turn.outcome == "complete"
    log = [entry for comm in comms for entry in comm.log]
    tool_syncs = [m for _, m, _ in log if "tools" in m]
    progress = [m for _, m, _ in log if m == "custom:progress"]
    assert len(tool_syncs) <= 3  # the status changes: running, done (never per line)
    assert len(progress) <= 10 * seconds + 1  # coalesced: at most max_rate (10) a second
    assert sum(size for _, _, size in log) < 100_000  # 100,000 lines printed
    entry = widget.tools["c1"]
    assert entry["progress_total"] == 100_000 and entry["progress_head"] == HEAD_LINES
    assert entry["progress"][0] == "line 0" and entry["progress"][-1] == "line 99999"
    assert len(json.dumps(widget.tools)) < 2_000  # what widget state saves


async def test_a_10_mb_print_saves_and_sends_about_a_kilobyte() -> None:
    @tool(run="unattended")
    def dump() -> str:
        """Prints 10 MB."""
        print("x" * 10_000_000)
        return "done"

    provider = ScriptedProvider([cycle(tool_call("dump", {}, call_id="c1")), cycle(message("ok"))])
    with counting_comms() as comms:
        widget = ChatWidget()
        await Chat(provider=provider, tools=[dump], sink=WidgetSink(widget)).send("go")
    assert sum(size for comm in comms for _, _, size in comm.log) < 30_000
    assert len(json.dumps(widget.tools)) < LINE_CHARS + 500


def test_print_sink_prints_new_lines_once_and_says_what_it_skipped() -> None:
    out = io.StringIO()
    sink = PrintSink(out)
    output = ToolOutput(head=2, tail=3)

    def report() -> None:
        sink.update(ToolUpdate("c1", "noisy", "running", 0.0, None, output.snapshot()))

    output.line("a")
    report()
    for i in range(10):
        output.line(f"b{i}")
    report()
    output.line("c")
    report()
    printed = [line for line in out.getvalue().splitlines() if line]
    assert printed == [
        "[noisy] a",
        "[noisy] b0",
        "[noisy] … 6 more lines not shown …",
        "[noisy] b7",
        "[noisy] b8",
        "[noisy] b9",
        "[noisy] c",
    ]


async def test_a_tool_reports_its_output_while_it_runs_and_in_full_at_the_end() -> None:
    sink = RecordingSink()
    await _noisy_chat(1_000, sink).send("go")
    updates = [u for u in sink.updates if isinstance(u, ToolUpdate)]
    assert updates[-1].status == "done" and updates[-1].output is not None
    assert updates[-1].output.total == 1_000 and updates[-1].output.tail[-1] == "line 999"


async def test_the_page_gets_only_new_lines_and_a_late_view_gets_every_kept_line() -> None:
    widget, page = page_widget()
    sink = WidgetSink(widget)
    output = ToolOutput(head=2, tail=3)

    def report(status: str = "running") -> None:
        sink.update(ToolUpdate("c1", "noisy", status, 1.0, None, output.snapshot()))  # type: ignore[arg-type]

    def progress() -> list[dict[str, Any]]:
        return [message["tools"]["c1"] for message in page.custom("progress")]

    output.line("l0")
    report()  # a status change: the trait, at once
    assert widget.tools["c1"]["progress"] == ["l0"] and progress() == []
    for i in range(1, 10):
        output.line(f"l{i}")
    report()
    report()  # nothing new: nothing more to send
    sink.flush()
    assert progress() == [
        {"head": 2, "from": 7, "total": 10, "runs": [(1, ["l1"]), (7, ["l7", "l8", "l9"])]}
    ]
    assert widget.tools["c1"]["progress"] == ["l0"]  # the trait is not resent per line
    widget._dispatch({"type": "ready"})  # a view rendered late
    assert progress()[-1] == {
        "head": 2,
        "from": 7,
        "total": 10,
        "runs": [(0, ["l0", "l1"]), (7, ["l7", "l8", "l9"])],
    }
    output.line("l10")
    report("done")
    assert widget.tools["c1"]["progress"] == ["l0", "l1", "l8", "l9", "l10"]
    assert widget.tools["c1"]["progress_total"] == 11 and len(progress()) == 2
