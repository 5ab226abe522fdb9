"""B6 — persistence: a 200-cycle turn with tool calls, saved the way a %%chat cell saves it.

The turn runs through Chat with a real ``CellFront``'s ``boundary`` as its ``on_boundary`` hook
(the package's own class, built as the magic builds it, so it cannot drift from a copy; no
kernel is needed: its widget's comm only counts) and the package's real ``Recorder`` with its
defaults (at most one write per ``min_interval`` = 1 s, the newest record written by a deferred
call), on fake display/update functions and a fake metadata comm (a cell id is set, as under
JupyterLab). Each model response starts ``PACE`` s after its request — a fast tool loop, the
case the throttle is for — so the turn lasts a few seconds.

Timed: every ``boundary()`` call while the turn goes on; every actual write (the immediate ones
inside ``boundary()``, the deferred ones through the recorder's ``call_later``); and
``finish(record)``, the final write ``CellFront.close`` makes. Counted: the JSON bytes of every
record, update and metadata message the recorder sends for the turn. Saved size: the final
output (``record_bundle``: the record plus its HTML transcript) as nbformat writes it into the
.ipynb (indent=1, multiline strings split), vs ``json.dumps`` of the raw events.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.engine.turn import TurnCoordinator
from jupyter_turns.kernel.front import CellFront
from jupyter_turns.kernel.grants import UserStore
from jupyter_turns.kernel.magic import ChatMagics
from jupyter_turns.kernel.persist import MetadataWriter, Recorder
from jupyter_turns.kernel.session import CellSettings, Session
from jupyter_turns.kernel.threads import Thread, Threads
from jupyter_turns.providers.scripted import Delay, ScriptedProvider, cycle, message, tool_call
from jupyter_turns.record.format import RECORD_MIME, record_bundle

from .common import Dist, Figure, Settings, answer, counting_comms, judge_max

SIZE_GOAL = 2.5
BOUNDARY_GOAL_MS = 5.0
CYCLES = 200
PACE = 0.02  # seconds from a request to its response


@tool(run="unattended")
def read_rows(path: str, rows: int = 20) -> str:
    """Read the first rows of a CSV file.

    Args:
        path: the file
        rows: how many rows
    """
    lines = ["id,name,value,note"]
    lines += [f"{i},item_{i},{(i * 7919) % 1000 / 10:.1f},ok" for i in range(rows)]
    return "\n".join(lines)


def _script(cycles: int) -> list[Any]:
    text = answer(600 * cycles)
    out = []
    for i in range(cycles - 1):
        prose = message(text[i * 400 : i * 400 + 400], chunks=20)
        call = tool_call("read_rows", {"path": f"data/part_{i:03d}.csv", "rows": 20})
        out.append([Delay(PACE), *cycle(prose, call)])
    out.append([Delay(PACE), *cycle(message(text[-2000:], chunks=50))])
    return out


class _Outbox:
    """What the recorder sends (outputs and metadata messages): sized by ``drain``, outside the
    timed regions, then dropped (keeping them all would make the GC pause inside the saves)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.unmeasured: list[Any] = []
        self.stub: dict[str, Any] | None = None

    def display(self, bundle: dict[str, Any], **kwargs: Any) -> None:
        self.unmeasured.append(bundle)

    update = display
    send = display  # the metadata comm

    def drain(self) -> None:
        for item in self.unmeasured:
            self.bytes += len(json.dumps(item))
            if item.get(RECORD_MIME, {}).get("superseded"):
                self.stub = item
        self.unmeasured.clear()


def _cell_front(chat: Chat, widget: bool) -> CellFront:
    """The package's own CellFront for one cell (a cell id set, as under JupyterLab; the
    settings ``ChatMagics`` defaults to; a throwaway store of the user's own: the size and the
    cost of recording what the kernel wrote are what count here). Its recorder is swapped for
    the bench's, which counts."""
    thread = Thread("main", chat, provider="scripted", configured=True)
    store = UserStore(Path(tempfile.mkdtemp(prefix="jupyter-turns-bench-store-")))
    session = Session(Threads(Chat), {}, cell_id="cell-0001", _store=store)
    front = CellFront(session, _cell_settings(), thread, asyncio.get_running_loop())
    if widget:  # a page shows it: its view has rendered
        chat.sink = front.sink
        front.widget._dispatch({"type": "ready"})
    return front


def _cell_settings() -> CellSettings:
    traits = ChatMagics.class_traits()
    names = [f.name for f in dataclasses.fields(CellSettings) if f.name != "changed"]
    return CellSettings.of(SimpleNamespace(**{n: traits[n].default() for n in names}))


async def _turn(cycles: int, *, widget: bool = False) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    out = _Outbox()
    calls: list[float] = []  # seconds per boundary() call while the turn goes on
    writes: list[tuple[int, float]] = []  # (events in the turn, seconds) per live-record write
    deferred: list[float] = []  # seconds of the writes made outside boundary()

    def call_later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        def timed() -> None:
            before, start = recorder.writes, time.perf_counter()
            callback()
            if recorder.writes > before and cell._last is not None:
                deferred.append(time.perf_counter() - start)
                writes.append((len(cell._last.events), deferred[-1]))

        return loop.call_later(delay, timed)

    recorder = Recorder(
        thread="main",
        cell_id="cell-0001",
        metadata=MetadataWriter(open_comm=lambda: out),
        notebook_state=lambda: {"version": 1, "current": "main", "threads": {"main": {}}},
        call_later=call_later,
        display=out.display,
        update_display=out.update,
    )
    chat = Chat(
        provider=ScriptedProvider(_script(cycles)),
        tools=[read_rows],
        prompter=PolicyPrompter("allow"),
        run_mode="unattended",
        max_cycles=cycles + 5,
    )
    with counting_comms():  # the live view too, with ``widget``
        cell = _cell_front(chat, widget)
    cell.recorder = recorder

    def on_boundary(turn: TurnCoordinator) -> None:
        running, before = turn.outcome == "running", recorder.writes
        start = time.perf_counter()
        cell.boundary(turn)
        took = time.perf_counter() - start
        if running:
            calls.append(took)
        if recorder.writes > before:
            writes.append((len(turn.events), took))
        out.drain()

    chat.on_boundary = on_boundary
    started = time.perf_counter()
    result = await chat.send("Read every part and summarize.")
    turn_s = time.perf_counter() - started
    assert result.outcome == "complete" and result.cycles == cycles, result
    assert cell._last is not None
    out.drain()
    during = out.bytes
    record = cell._record(cell._last)
    start = time.perf_counter()
    recorder.finish(record)  # what CellFront.close does after the turn
    finish_s = time.perf_counter() - start
    out.drain()
    log = cell.widget.comm.log if widget else []
    return {
        "turn_s": turn_s,
        "calls": calls,
        "writes": writes,
        "deferred": deferred,
        "finish_s": finish_s,
        "bytes_during": during,
        "bytes_total": out.bytes,
        "stub": out.stub,
        "events": list(result.events),
        "record": record,
        "widget_json_bytes": sum(size for _, _, size in log),
        "events_trait_updates": sum(1 for _, m, _ in log if m == "update:events"),
        "events_trait_bytes": sum(size for _, m, size in log if m == "update:events"),
        "widget_messages": Counter(m for _, m, _ in log),
    }


def _notebook_bytes(outputs: list[dict[str, Any]], metadata: dict[str, Any]) -> int:
    nb = nbformat.v4.new_notebook()
    made = [nbformat.v4.new_output("display_data", data=b, metadata={}) for b in outputs]
    cell = nbformat.v4.new_code_cell("%%chat\nbench", outputs=made)
    cell.metadata.update(metadata)
    nb.cells = [cell]
    return len(nbformat.writes(nb).encode())


def _ipynb_bytes(outputs: list[dict[str, Any]], metadata: dict[str, Any] | None = None) -> int:
    """What these outputs (and cell metadata) add to a saved notebook."""
    return _notebook_bytes(outputs, metadata or {}) - _notebook_bytes([], {})


def _size_figure(got: dict[str, Any], cycles: int) -> Figure:
    raw = len(json.dumps([e.model_dump(mode="json") for e in got["events"]]).encode())
    bundle = record_bundle(got["record"])
    final = _ipynb_bytes([bundle])
    record_only = _ipynb_bytes([{k: v for k, v in bundle.items() if k != "text/html"}])
    stub = [got["stub"]] if got["stub"] else []
    whole_cell = _ipynb_bytes([*stub, bundle], {"jupyter_turns": got["record"]})
    met, margin = judge_max(final / raw, SIZE_GOAL)
    return Figure(
        "B6",
        f"saved final record (record + HTML transcript, .ipynb) / json.dumps(raw events), "
        f"{cycles} cycles",
        final / raw,
        "x",
        goal=f"≤ {SIZE_GOAL:g}x",
        met=met,
        margin=margin,
        details={
            "events": len(got["events"]),
            "raw_events_json_bytes": raw,
            "final_output_ipynb_bytes": final,
            "of_which_record_mime_bytes": record_only,
            "of_which_transcript_html_bytes": final - record_only,
            "whole_cell_bytes_with_stub_and_cell_metadata": whole_cell,
            "whole_cell_ratio": whole_cell / raw,
        },
    )


def _figures(runs: list[dict[str, Any]], view: dict[str, Any], cycles: int) -> list[Figure]:
    got = runs[-1]
    calls = Dist.of([statistics.median(r["calls"]) * 1e3 for r in runs])
    met, margin = judge_max(calls.median, BOUNDARY_GOAL_MS)
    writes = Dist.of([s * 1e3 for r in runs for _, s in r["writes"]])
    finish = Dist.of([r["finish_s"] * 1e3 for r in runs])
    sent = Dist.of([r["bytes_total"] / 1e6 for r in runs])
    persist_ms = [(sum(r["calls"]) + sum(r["deferred"]) + r["finish_s"]) * 1e3 for r in runs]
    per_turn = f"{cycles}-cycle turn, responses {PACE * 1e3:g} ms apart"
    return [
        _size_figure(got, cycles),
        Figure(
            "B6",
            f"cycle-boundary save: boundary() call, median over a {per_turn} "
            f"({len(got['calls'])} calls; throttled)",
            calls.median,
            "ms",
            calls,
            f"≤ {BOUNDARY_GOAL_MS:g} ms",
            met,
            margin,
            details={"turn_s": [round(r["turn_s"], 2) for r in runs]},
        ),
        Figure(
            "B6",
            "live-record write (record + update + metadata), median of all writes "
            f"({len(got['writes'])} per turn)",
            writes.median,
            "ms",
            writes,
            kind="info",
            details={
                "writes_per_turn": [len(r["writes"]) for r in runs],
                "last_run_writes_ms_by_events": {n: round(s * 1e3, 3) for n, s in got["writes"]},
                "persistence_ms_per_turn": [round(x, 1) for x in persist_ms],
            },
        ),
        Figure(
            "B6",
            f"final-record write at the end (finish, {len(got['events'])} events)",
            finish.median,
            "ms",
            finish,
            kind="info",
        ),
        Figure(
            "B6",
            "bytes the recorder sends over the turn (live records, stub, metadata, final)",
            sent.median,
            "MB",
            sent,
            kind="info",
            details={
                "during_the_turn_bytes": got["bytes_during"],
                "at_the_end_bytes": got["bytes_total"] - got["bytes_during"],
            },
        ),
        Figure(
            "B6",
            f"live view of the same turn: widget comm JSON ({view['events_trait_updates']} "
            "events-trait updates, the list sent whole)",
            view["widget_json_bytes"] / 1e6,
            "MB",
            kind="info",
            details={
                "events_trait_json_bytes": view["events_trait_bytes"],
                "messages_by_kind": dict(view["widget_messages"]),
                "turn_s_with_widget": round(view["turn_s"], 2),
            },
        ),
    ]


def run(settings: Settings) -> list[Figure]:
    repeats = settings.pick(5, 1)
    cycles = settings.pick(CYCLES, 20)

    async def main() -> list[Figure]:
        await _turn(10)  # warm up
        runs = [await _turn(cycles) for _ in range(repeats)]
        return _figures(runs, await _turn(cycles, widget=True), cycles)

    return asyncio.run(main())
