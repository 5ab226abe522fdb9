"""B6 — persistence: a 200-cycle turn with tool calls, saved the way a %%chat cell saves it.

The turn runs through Chat with the package's own ``CellFront._boundary`` / ``_record`` as its
``on_boundary`` hook (borrowed onto a small stand-in, so no widget or kernel is needed): the
record of the turn's events, then ``Recorder.boundary(record)`` — with fake display/update
functions and a counting metadata comm (a cell id is set, as under JupyterLab). Timed: each
boundary call, record building included; the end of the turn is ``CellFront.close``'s
``recorder.finish(record)``. Saved size: the final output
(``record_bundle``) as nbformat writes it into the .ipynb (indent=1, multiline strings split),
measured as the difference between a notebook with and without that output, vs ``json.dumps``
of the raw events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from typing import Any

import nbformat

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.front import CellFront
from jupyter_turns.persist import MetadataWriter, Recorder, record_bundle
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.threads import Thread
from jupyter_turns.turn import TurnCoordinator
from jupyter_turns.widget import ChatWidget, WidgetSink

from .common import Dist, Figure, Settings, answer, counting_comms, judge_max
from .whatif import CoalescedRecorder, lazy_boundary

SIZE_GOAL = 2.5
BOUNDARY_GOAL_MS = 5.0


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
        prose = text[i * 400 : i * 400 + 400]
        out.append(
            cycle(
                message(prose, chunks=20),
                tool_call("read_rows", {"path": f"data/part_{i:03d}.csv", "rows": 20}),
            )
        )
    out.append(cycle(message(text[-2000:], chunks=50)))
    return out


class _CountingComm:
    """The metadata comm: counts messages; keeps only those not yet measured (see ``drain``)."""

    def __init__(self) -> None:
        self.count = 0
        self.bytes = 0
        self.unmeasured: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.count += 1
        self.unmeasured.append(message)

    def drain(self) -> None:
        """JSON-size what was sent (outside the timed region) and let it go."""
        self.bytes += sum(len(json.dumps(m)) for m in self.unmeasured)
        self.unmeasured.clear()


class _Fakes:
    """display / update_display stand-ins: count calls, keep the last bundle, no copy, no I/O.

    Keeping every bundle would hold ~60 MB of dicts and make the GC pause inside the timed
    saves, so bundles are sized (outside the timed region) and dropped by ``drain``.
    """

    def __init__(self) -> None:
        self.count = 0
        self.bytes = 0
        self.unmeasured: list[dict[str, Any]] = []
        self.last: list[dict[str, Any]] = []

    def display(self, bundle: dict[str, Any], **kwargs: Any) -> None:
        self.count += 1
        self.unmeasured.append(bundle)

    update = display

    def drain(self) -> None:
        self.bytes += sum(len(json.dumps(b)) for b in self.unmeasured)
        self.last = (self.last + self.unmeasured)[-2:]
        self.unmeasured.clear()


class _Cell:
    """Just enough of a CellFront to run its boundary code (the package's, not a copy)."""

    _record = CellFront._record  # type: ignore[misc]
    _boundary = CellFront._boundary  # type: ignore[misc]

    def __init__(self, thread: Thread, recorder: Recorder) -> None:
        self.thread = thread
        self.recorder = recorder
        self._last: TurnCoordinator | None = None


class _TimedCoalesced(CoalescedRecorder):
    """The what-if recorder, also timing the deferred writes (they run outside ``boundary``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deferred_s = 0.0

    def _write_live(self) -> None:
        start = time.perf_counter()
        super()._write_live()
        self.deferred_s += time.perf_counter() - start


def _ipynb_bytes(outputs: list[Any], metadata: dict[str, Any] | None = None) -> int:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%chat\nbench", outputs=outputs)
    if metadata:
        cell.metadata.update(metadata)
    nb.cells = [cell]
    return len(nbformat.writes(nb).encode())


def _output(bundle: dict[str, Any]) -> Any:
    return nbformat.v4.new_output("display_data", data=bundle, metadata={})


async def _turn(
    cycles: int,
    recorder_class: type[Recorder] = Recorder,
    *,
    lazy: bool = False,
    widget: bool = False,
) -> dict[str, Any]:
    comm = _CountingComm()
    fakes = _Fakes()
    recorder = recorder_class(
        thread="main",
        cell_id="cell-0001",
        metadata=MetadataWriter(open_comm=lambda: comm),
        notebook_state=lambda: {"version": 1, "current": "main", "threads": {"main": {}}},
        display=fakes.display,
        update_display=fakes.update,
    )
    times: list[tuple[int, float]] = []
    comms = contextlib.ExitStack()
    sink: WidgetSink | None = None
    if widget:  # the live view too: a ChatWidget on a counting comm
        comms.enter_context(counting_comms())
        sink = WidgetSink(ChatWidget(thread="main"))
    chat = Chat(
        provider=ScriptedProvider(_script(cycles)),
        tools=[read_rows],
        prompter=PolicyPrompter("allow"),
        run_mode="unattended",
        max_cycles=cycles + 5,
        sink=sink,
    )
    cell = _Cell(Thread("main", chat, provider="scripted", configured=True), recorder)
    boundary = (lambda turn: lazy_boundary(cell, turn)) if lazy else cell._boundary
    harness = [0.0]  # seconds spent measuring sizes, not saving: taken out of the turn time

    def on_boundary(turn: TurnCoordinator) -> None:
        start = time.perf_counter()
        boundary(turn)
        end = time.perf_counter()
        times.append((len(turn.events), end - start))
        fakes.drain()
        comm.drain()
        harness[0] += time.perf_counter() - end

    chat.on_boundary = on_boundary
    started = time.perf_counter()
    with comms:
        result = await chat.send("Read every part and summarize.")
    turn_s = time.perf_counter() - started - harness[0]
    assert result.outcome == "complete" and result.cycles == cycles, result
    assert cell._last is not None
    record = cell._record(cell._last)
    start = time.perf_counter()
    recorder.finish(record)  # what CellFront.close does after the turn
    finish_ms = (time.perf_counter() - start) * 1e3
    fakes.drain()
    comm.drain()
    view: dict[str, Any] = {}
    if sink is not None:
        log = sink.widget.comm.log
        view = {
            "widget_messages": len(log),
            "widget_json_bytes": sum(size for _, _, size in log),
            "events_trait_updates": sum(1 for t, m, _ in log if t == "comm_msg" and m == "update"),
        }
    return {
        "turn_s": turn_s,
        "persist_ms": (sum(t for _, t in times) + getattr(recorder, "deferred_s", 0.0)) * 1e3
        + finish_ms,
        "writes": recorder.writes,
        "view": view,
        "times": times,
        "events": list(result.events),
        "record": record,
        "fakes": fakes,
        "comm": comm,
        "finish_ms": finish_ms,
    }


def _window(times: list[tuple[int, float]], lo: float, hi: float) -> float:
    n = len(times)
    chunk = [t for _, t in times[int(n * lo) : max(int(n * hi), int(n * lo) + 1)]]
    return statistics.median(chunk) * 1e3


def run(settings: Settings) -> list[Figure]:
    cycles = 200
    repeats = settings.pick(5, 2)

    async def main() -> list[Figure]:
        await _turn(10)  # warm up
        runs = [await _turn(cycles) for _ in range(repeats)]
        got = runs[-1]
        events = got["events"]
        raw = len(json.dumps([e.model_dump(mode="json") for e in events]).encode())
        bundle = record_bundle(got["record"])
        empty = _ipynb_bytes([])
        final = _ipynb_bytes([_output(bundle)]) - empty
        record_only = (
            _ipynb_bytes(
                [
                    _output(
                        {k: v for k, v in bundle.items() if k not in ("text/html", "text/markdown")}
                    )
                ]
            )
            - empty
        )
        stub = got["fakes"].last[0]
        whole_cell = (
            _ipynb_bytes([_output(stub), _output(bundle)], {"jupyter_turns": got["record"]}) - empty
        )
        ratio = final / raw
        met, margin = judge_max(ratio, SIZE_GOAL)
        figures = [
            Figure(
                "B6",
                f"saved final record (.ipynb, indent=1) / json.dumps(raw events), {cycles} cycles",
                ratio,
                "x",
                None,
                f"≤ {SIZE_GOAL:g}x",
                met,
                margin,
                details={
                    "events": len(events),
                    "raw_events_json_bytes": raw,
                    "final_output_ipynb_bytes": final,
                    "of_which_record_mime_bytes": record_only,
                    "of_which_transcript_markdown_bytes": final - record_only,
                    "whole_cell_bytes_with_stub_and_cell_metadata": whole_cell,
                    "whole_cell_ratio": whole_cell / raw,
                },
            )
        ]
        medians = [statistics.median(t for _, t in r["times"]) * 1e3 for r in runs]
        per_run = Dist.of(medians)
        met, margin = judge_max(per_run.median, BOUNDARY_GOAL_MS)
        times = got["times"]
        growth = {
            f"events≈{times[int(len(times) * lo)][0]}": _window(times, lo, lo + 0.05)
            for lo in (0.0, 0.25, 0.5, 0.75, 0.95)
        }
        # least-squares slope of boundary time over the turn's event count
        xs = [x for x, _ in times]
        ys = [y * 1e3 for _, y in times]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
            (x - mx) ** 2 for x in xs
        )
        figures.append(
            Figure(
                "B6",
                f"cycle-boundary save, median over a {cycles}-cycle turn ({len(times)} saves)",
                per_run.median,
                "ms",
                per_run,
                f"≤ {BOUNDARY_GOAL_MS:g} ms",
                met,
                margin,
                details={
                    "median_ms_by_turn_length": growth,
                    "last_save_ms": times[-1][1] * 1e3,
                    "slope_ms_per_event": slope,
                    "total_save_s": sum(t for _, t in times),
                    "finish_ms": got["finish_ms"],
                    "metadata_comm_messages": got["comm"].count,
                    "metadata_comm_json_bytes": got["comm"].bytes,
                    "display_calls": got["fakes"].count,
                    "display_json_bytes": got["fakes"].bytes,
                },
            )
        )
        figures.append(
            Figure(
                "B6",
                f"last cycle-boundary save ({times[-1][0]} events)",
                times[-1][1] * 1e3,
                "ms",
                Dist.of([r["times"][-1][1] * 1e3 for r in runs]),
                kind="info",
                details={"growth": "linear in the turn's events; O(n²) over the turn"},
            )
        )
        sent = got["comm"].bytes + got["fakes"].bytes
        whatif = [await _turn(cycles, _TimedCoalesced, lazy=True) for _ in range(repeats)]
        w = whatif[-1]
        w_total = Dist.of([r["persist_ms"] for r in whatif])
        today_total = Dist.of([r["persist_ms"] for r in runs])
        figures.append(
            Figure(
                "B6",
                f"persistence time over the whole {cycles}-cycle turn (all saves + finish)",
                today_total.median,
                "ms",
                today_total,
                kind="info",
                details={"recorder_writes": got["writes"], "bytes_sent_for_the_turn": sent},
            )
        )
        figures.append(
            Figure(
                "B6",
                "what-if: same, coalesced lazy live record (whatif.CoalescedRecorder)",
                w_total.median,
                "ms",
                w_total,
                kind="what-if",
                details={
                    "boundary_call_median_ms": statistics.median(t for _, t in w["times"]) * 1e3,
                    "recorder_writes": w["writes"],
                    "recorder_writes_today": got["writes"],
                    "bytes_sent_for_the_turn": w["comm"].bytes + w["fakes"].bytes,
                    "bytes_sent_today": sent,
                    "turn_s": round(w["turn_s"], 3),
                    "turn_s_today": round(got["turn_s"], 3),
                },
            )
        )
        view = await _turn(cycles, widget=True)
        figures.append(
            Figure(
                "B6",
                f"live view of the same {cycles}-cycle turn: widget comm bytes "
                "(events trait re-sent whole on every append)",
                view["view"]["widget_json_bytes"] / 1e6,
                "MB",
                None,
                kind="info",
                details={
                    **view["view"],
                    "raw_events_json_bytes": raw,
                    "turn_s_with_widget": round(view["turn_s"], 3),
                    "turn_s_without": round(got["turn_s"], 3),
                },
            )
        )
        return figures

    return asyncio.run(main())
