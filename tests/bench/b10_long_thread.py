"""B10 — a long thread: 300 turns in one notebook thread, each a tool call and a 2 KB answer.

A real kernel (``tests/kernel/kernel.py``'s KernelDriver, driven as JupyterLab drives it: a
session, a cell id per cell, the view's ``ready``; :class:`tests.bench.b2_bytes.BenchKernel`)
runs ``%%chat`` cells one after the other on one thread. The provider is scripted, so only the
package's own work is timed (and kept: the provider here keeps no request, as a real one keeps
none): each turn is a cycle that calls ``lookup`` (an unattended tool)
after 0.2 s (the model thinking: the view renders and says ``ready`` meanwhile, as in
JupyterLab, so every turn sends the same kinds of messages) and a cycle that answers 2 KB of
markdown in 20 deltas, unpaced.

Measured, early in the thread (turns 5-14) against late (the last 10 turns):

* the kernel's time per turn: the CPU time of the kernel process (``time.process_time()``,
  read by a user expression of each execute request), turn to turn — so the model's pause and
  the machine's other load are not counted; median of the window;
* the bytes the kernel sends for a turn: every IOPub frame of the cell (the tap of B2) plus the
  execute reply, median of the window;
* the kernel's memory growth per turn: ``tracemalloc``'s traced memory over 10 more turns,
  traced only then (after the early window, and after the last turn) so the timing windows run
  untraced;
* the saved file: the notebook a page saves (every cell's final output) after a third, two
  thirds and all of the turns — linear means the last is 3x the first;
* the restore: a new kernel runs ``%chat restore`` on the saved notebook (its own clock), then
  one more turn; its request must carry each restored event once.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

import nbformat

from tests.kernel.kernel import KernelDriver, notebook_from

from .b2_bytes import BenchKernel
from .common import REPO, Dist, Figure, Settings, judge_max

TIME_GOAL = 1.3  # late / early kernel time per turn
BYTES_GOAL = 1.1  # late / early bytes per turn
RESTORE_GOAL_S = 1.0
WINDOW = 10  # turns per measuring window (3 in quick mode)

_SETUP = """
import sys
sys.path.insert(0, {repo!r})
from jupyter_turns import tool
from jupyter_turns.providers.scripted import Delay, ScriptedProvider, cycle, message, tool_call
from tests.bench.common import answer

@tool(run="unattended")
def lookup(key: str) -> str:
    '''Look a key up in the team's table.'''
    return f"the value of {{key}} is {{len(key) * 7}}"

class Forgetful(ScriptedProvider):
    '''Keeps no request (ScriptedProvider keeps them all for tests; a real provider none).'''

    def stream(self, request):
        played = super().stream(request)
        self.requests.clear()
        return played

B10_SCRIPT = Forgetful(
    [
        c
        for k in range({turns})
        for c in (
            [Delay(0.2), *cycle(tool_call("lookup", {{"key": f"key-{{k}}"}}))],
            cycle(message(answer(2000), chunks=20)),
        )
    ]
)
"""

_FIRST = "%%chat --new --provider scripted --script B10_SCRIPT --tools unattended\nQuestion 0"
_NEXT = "%%chat --script B10_SCRIPT\nQuestion {k}"  # a script plays for the cell naming it

_TRACE_START = """
import gc, tracemalloc
gc.collect()
tracemalloc.start()
print(tracemalloc.get_traced_memory()[0])
"""
_TRACE_STOP = """
gc.collect()
print(tracemalloc.get_traced_memory()[0])
tracemalloc.stop()
"""

_RESTORE = """
import time
_start = time.perf_counter()
get_ipython().run_line_magic("chat", "restore {path}")
B10_RESTORE_S = time.perf_counter() - _start
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message
B10_NEXT = ScriptedProvider([cycle(message("Still here."))])
"""

_SENT = """
import json
_events = B10_NEXT.requests[0].events
print(json.dumps({
    "restore_s": B10_RESTORE_S,
    "requests": len(B10_NEXT.requests),
    "events": len(_events),
    "distinct": len({e.id for e in _events}),
    "json_bytes": len(json.dumps([e.model_dump(mode="json") for e in _events])),
}))
"""


_CPU = {"cpu": "__import__('time').process_time()"}


def _cpu(run: dict[str, Any]) -> float:
    """The kernel's CPU time after the cell (its user expression)."""
    return float(run["reply"]["user_expressions"]["cpu"]["data"]["text/plain"])


def _bytes(run: dict[str, Any]) -> int:
    return sum(m.total for m in run["messages"]) + int(run["reply_bytes"])


def _traced_growth(bench: BenchKernel, turns: range) -> float:
    """Bytes of traced memory the kernel kept per turn over ``turns`` (traced only then)."""
    before = int(bench.driver.run(_TRACE_START).stdout())
    for k in turns:
        bench.cell(_NEXT.format(k=k), ready=True)
    after = int(bench.driver.run(_TRACE_STOP).stdout())
    return (after - before) / len(turns)


def _thread(turns: int, window: int) -> dict[str, Any]:
    """Run the thread: per-turn runs, memory growth early and late, each chat cell's outputs."""
    bench = BenchKernel(page=True)
    try:
        bench.driver.run(_SETUP.format(repo=str(REPO), turns=turns + 2 * window), timeout=60)
        runs = [bench.cell(_FIRST, ready=True, expressions=_CPU)]
        early_end = 5 + window
        for k in range(1, early_end):
            runs.append(bench.cell(_NEXT.format(k=k), ready=True, expressions=_CPU))
        early_memory = _traced_growth(bench, range(early_end, early_end + window))
        runs.append(bench.cell("pass", expressions=_CPU))  # the clock after the traced turns
        for k in range(early_end + window, turns):
            runs.append(bench.cell(_NEXT.format(k=k), ready=True, expressions=_CPU))
        late_memory = _traced_growth(bench, range(turns, turns + window))
        cells = [c for c in bench.driver.cells.values() if c.records()]
        outputs = [(_NEXT.format(k=k), c.outputs) for k, c in enumerate(cells)]
    finally:
        bench.close()
    return {
        "runs": runs,
        "memory": (early_memory, late_memory),
        "outputs": outputs,
        "window": window,
    }


def _saved_sizes(outputs: list[tuple[str, list[dict[str, Any]]]], path: Path) -> list[int]:
    """The saved notebook's size after a third, two thirds and all of ``outputs``; writes the
    whole one to ``path``."""
    sizes = []
    for n in (len(outputs) // 3, 2 * len(outputs) // 3, len(outputs)):
        notebook = notebook_from(outputs[:n])
        sizes.append(len(nbformat.writes(notebook).encode()))
    nbformat.write(notebook_from(outputs), path)
    return sizes


def _restore(path: Path) -> dict[str, Any]:
    driver = KernelDriver()
    try:
        driver.run("%load_ext jupyter_turns")
        driver.run(_RESTORE.format(path=str(path)), timeout=120)
        driver.run("%%chat --script B10_NEXT\nAnd now?", timeout=120)
        got: dict[str, Any] = json.loads(driver.run(_SENT).stdout())
    finally:
        driver.close()
    return got


def _saved_events(path: Path) -> tuple[int, int]:
    """How many events the saved notebook's records hold, and their JSON bytes."""
    notebook = nbformat.read(path, as_version=4)
    events = [
        e
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        for e in output.get("data", {})
        .get("application/vnd.jupyter-turns+json", {})
        .get("events", [])
    ]
    return len(events), len(json.dumps(events))


def _window(values: list[float], start: int, size: int) -> Dist:
    return Dist.of(values[start : start + size])


def _figures(
    got: dict[str, Any],
    sizes: list[int],
    restored: dict[str, Any],
    saved: tuple[int, int],
    turns: int,
) -> list[Figure]:
    runs, window = got["runs"], got["window"]
    gap = 5 + window  # the "pass" cell after the traced turns: it starts the clock anew
    seconds = [(_cpu(b) - _cpu(a)) * 1e3 for a, b in itertools.pairwise(runs)]
    seconds = seconds[: gap - 1] + seconds[gap:]
    runs = runs[1:gap] + runs[gap + 1 :]
    sent = [float(_bytes(r)) for r in runs]
    late = len(runs) - window
    early_t, late_t = _window(seconds, 4, window), _window(seconds, late, window)  # from turn 5
    early_b, late_b = _window(sent, 4, window), _window(sent, late, window)
    time_ratio = late_t.median / early_t.median
    bytes_ratio = late_b.median / early_b.median
    early_mem, late_mem = got["memory"]
    linear = sizes[-1] / (3 * sizes[0])
    once = restored["events"] == saved[0] + 1 and restored["distinct"] == restored["events"]
    figures = []
    met, margin = judge_max(time_ratio, TIME_GOAL)
    figures.append(
        Figure(
            "B10",
            f"kernel CPU per turn, turns {turns - window}-{turns - 1} / turns 5-{4 + window} "
            f"({turns}-turn thread, a tool call and a 2 KB answer each; "
            f"{early_t.median:.0f} → {late_t.median:.0f} ms)",
            time_ratio,
            "x",
            goal=f"≤ {TIME_GOAL:g}x",
            met=met,
            margin=margin,
            details={
                "early_ms": early_t.__dict__,
                "late_ms": late_t.__dict__,
                "per_turn_ms": [round(s, 1) for s in seconds],
            },
        )
    )
    met, margin = judge_max(bytes_ratio, BYTES_GOAL)
    figures.append(
        Figure(
            "B10",
            f"bytes sent per turn, turns {turns - window}-{turns - 1} / turns 5-{4 + window} "
            f"({early_b.median / 1000:.1f} → "
            f"{late_b.median / 1000:.1f} KB)",
            bytes_ratio,
            "x",
            goal=f"≤ {BYTES_GOAL:g}x (flat within 10%)",
            met=met,
            margin=margin,
            details={"per_turn_bytes": [int(b) for b in sent]},
        )
    )
    figures.append(
        Figure(
            "B10",
            f"kernel memory kept per turn (tracemalloc, {window} turns after turn {turns})",
            late_mem / 1000,
            "KB/turn",
            kind="info",
            details={
                "early_kb_per_turn": early_mem / 1000,
                "late_kb_per_turn": late_mem / 1000,
                "saved_events_json_bytes_per_turn": saved[1] / turns,
            },
        )
    )
    figures.append(
        Figure(
            "B10",
            f"saved notebook: {turns} turns / 3x its first third ({sizes[-1] / 1e6:.2f} MB)",
            linear,
            "x",
            goal="≈ 1 (linear)",
            met=linear <= 1.1,
            margin=f"{linear:.2f}",
            details={"sizes_bytes": sizes},
        )
    )
    met, margin = judge_max(restored["restore_s"], RESTORE_GOAL_S)
    figures.append(
        Figure(
            "B10",
            f"restore of the saved {turns}-turn notebook in a new kernel (%chat restore)",
            restored["restore_s"],
            "s",
            goal=f"≤ {RESTORE_GOAL_S:g} s",
            met=met,
            margin=margin,
        )
    )
    figures.append(
        Figure(
            "B10",
            "first request after the restore: events sent / saved events + the new request "
            f"({restored['events']:,} / {saved[0] + 1:,})",
            restored["events"] / (saved[0] + 1),
            "x",
            goal="1 (the thread once)",
            met=once,
            margin="once" if once else "not once",
            details=restored,
        )
    )
    return figures


def run(settings: Settings) -> list[Figure]:
    turns = settings.pick(300, 12)
    got = _thread(turns, settings.pick(WINDOW, 3))
    with tempfile.TemporaryDirectory(prefix="jt-bench-b10-") as tmp:
        path = Path(tmp) / "long-thread.ipynb"
        sizes = _saved_sizes(got["outputs"][:turns], path)
        saved = _saved_events(path)
        restored = _restore(path)
    return _figures(got, sizes, restored, saved, turns)
