"""B11 — opening a notebook full of conversations in JupyterLab, and scrolling through it.

The notebook: 40 ``%%chat`` cells, one thread, each cell a 20-cycle tool turn (19 answers that
call a tool whose result is a ~1.5 KB DataFrame summary, then a ~2 KB markdown answer with a
table and code). The turns are played by the scripted provider through ``Chat`` in this
process, and each cell's output is what a chat cell saves: ``record_bundle(turn_record(...))``
(the record, its sanitized ``text/html`` transcript, a ``text/plain`` line). The baseline is the
same notebook with the record taken out of each output: what JupyterLab draws without us (its
own HTML renderer on the transcript). A third notebook, the same cells with no outputs at all,
shows what JupyterLab's own cells cost (editors, prompts, toolbars) with nothing of ours.

Each notebook is opened with no kernel ("No Kernel") on a JupyterLab server of its own (the
browser tests' ``start_lab_server``) in headless Chromium, a fresh page each time, under
JupyterLab's default windowing mode (``contentVisibility``: every cell's outputs are rendered,
offscreen cells are not laid out or painted; judged) and under ``none`` (every cell laid out,
as in the browser tests; shown).

Timed in the page: from the ``docmanager:open`` command to the frame after the last cell's
conversation shows its final answer; ours against the baseline, alternating, median of the runs.
Then the page scrolls the notebook from top to bottom, one step per frame, while a
``PerformanceObserver`` counts long tasks (> 50 ms) and every frame's time is kept: the worst
frame is the goal, long tasks are reported. Chromium's own counters (DevTools
``Performance.getMetrics``) split the scroll's main-thread time into style recalculation,
layout and script, and the DOM elements in each chat cell are counted after the open: a table
per windowing mode says which step costs what, for ours, the fallback and the empty cells.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import urllib.parse
from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import Page

from jupyter_turns import Chat, PolicyPrompter, tool
from jupyter_turns.engine.turn_state import cycles_record
from jupyter_turns.providers.scripted import ScriptedProvider, cycle, message, tool_call
from jupyter_turns.record.format import RECORD_MIME, record_bundle, turn_record
from tests.browser.lab import browser_context

from .browsers import lab_and_browser
from .common import Dist, Figure, Settings, judge_max

RATIO_GOAL = 1.5
FRAME_GOAL_MS = 50.0
CELLS, CYCLES = 40, 20
QUICK_CELLS, QUICK_CYCLES = 6, 5  # --quick: every step runs, small


def _summary(n: int) -> str:
    rows = "\n".join(
        f"{i:>4}  station_{(n * 7 + i) % 31:02d}  {12.5 + i * 0.37:7.2f}  {980 + i * 3:5d}"
        for i in range(30)
    )
    return f"DataFrame 8,760×4 (call {n})\n   #  station      mm      hPa\n{rows}"


@tool(run="unattended")
def describe(name: str) -> str:
    """Summarize a DataFrame in the notebook: shape and the first rows.

    Args:
        name: the variable's name.
    """
    return _summary(len(name))


def _answer(turn: int) -> str:
    table = "\n".join(f"| station_{i:02d} | {12.5 + i:.1f} | {980 + i} |" for i in range(12))
    prose = " ".join(f"Rainfall at station {i} rose in winter." for i in range(12))
    code = "\n".join(f"df{i % 5}.groupby('station').mm.mean()" for i in range(6))
    return (
        f"## Findings for question {turn}\n\n{prose}\n\n| station | mm | hPa |\n|---|---|---|\n"
        f"{table}\n\n```python\n{code}\n```\n\nanswer-{turn}-end"
    )


def _script(turn: int, cycles: int) -> list[list[Any]]:
    calls = [
        cycle(
            message(f"Let me look at df{n % 5} again, step {n}."),
            tool_call("describe", {"name": f"df{n % 5}"}, call_id=f"call_{turn}_{n}"),
        )
        for n in range(cycles - 1)
    ]
    return [*calls, cycle(message(_answer(turn)))]


async def _records(cells: int, cycles: int) -> list[dict[str, Any]]:
    """Each cell's final output, as a chat cell saves it."""
    chat = Chat(tools=[describe], prompter=PolicyPrompter("allow"), max_cycles=cycles + 5)
    bundles = []
    for turn in range(cells):
        provider = ScriptedProvider(_script(turn, cycles))
        result = await chat.send(f"Question {turn}: what stands out?", provider=provider)
        assert result.outcome == "complete" and result.cycles == cycles, result
        turn_info = {"outcome": result.outcome, "usage": result.usage.as_dict()}
        turn_info["cycles"] = cycles_record(result.ends)
        record = turn_record(
            chat.conversation.conversation_id, "main", result.events, turn=turn_info
        )
        bundles.append(record_bundle(record))
    return bundles


# The notebooks measured: ours, the baseline (the same outputs without the record: JupyterLab's
# HTML renderer on the transcript), and the same cells with no outputs (JupyterLab's own cost)
NOTEBOOKS = {"ours": "ours", "html": "text/html fallback", "empty": "no outputs"}


def notebooks(cells: int, cycles: int) -> dict[str, list[Any]]:
    """Each notebook's cells, by the names of NOTEBOOKS."""
    bundles = asyncio.run(_records(cells, cycles))
    made = {}
    for name in NOTEBOOKS:
        nb_cells = [nbformat.v4.new_code_cell("%load_ext jupyter_turns")]
        for n, bundle in enumerate(bundles):
            data = (
                bundle if name == "ours" else {k: v for k, v in bundle.items() if k != RECORD_MIME}
            )
            cell = nbformat.v4.new_code_cell(f"%%chat\nQuestion {n}: what stands out?")
            if name != "empty":
                cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
            nb_cells.append(cell)
        made[name] = nb_cells
    return made


# The page opens the notebook with no kernel and resolves with the milliseconds until the frame
# after the last cell shows ``marker``.
_OPEN_TIMED = """
async ({ path, marker }) => {
  const app = window.jupyterapp;
  await app.restored;
  const t0 = performance.now();
  const panel = await app.commands.execute("docmanager:open", {
    path, factory: "Notebook", kernelPreference: { shouldStart: false, shouldReuse: false },
  });
  window.__b11 = panel;
  await panel.context.ready;
  await new Promise((resolve) => {
    const check = () => {
      const cells = panel.content.widgets;
      const last = cells[cells.length - 1];
      const text = marker ? last?.outputArea.node.textContent : last?.model.sharedModel.source;
      if (cells.length > 1 && text?.includes(marker || "Question")) resolve();
      else requestAnimationFrame(check);
    };
    check();
  });
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}
"""

# The DOM elements of each chat cell's outputs, once opened (the cells' own elements are not
# counted: under windowing a cell off screen holds none of them)
_ELEMENTS = """
() => window.__b11.content.widgets.slice(1).map(
  (cell) => cell.outputArea.node.querySelectorAll("*").length,
)
"""

# Scroll the notebook top to bottom, ``step`` px per frame; the frame times and long tasks.
_SCROLL = """
async ({ step }) => {
  const panel = window.__b11;
  const scroller = panel.content.outerNode ?? panel.content.node;
  const long = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) long.push(entry.duration);
  });
  // the notebook laid out to its full height first (a page may still be sizing it): its
  // height unchanged for a second (20 s at most; a small notebook is short from the start)
  const deadline = performance.now() + 20000;
  let height = -1;
  let since = performance.now();
  while (performance.now() - since < 1000 && performance.now() < deadline) {
    if (scroller.scrollHeight !== height) {
      height = scroller.scrollHeight;
      since = performance.now();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  observer.observe({ type: "longtask", buffered: false });
  scroller.scrollTop = 0;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const frames = [];
  let last = performance.now();
  await new Promise((resolve) => {
    const tick = (now) => {
      frames.push(now - last);
      last = now;
      const end = scroller.scrollHeight - scroller.clientHeight;
      if (scroller.scrollTop >= end - 1) return resolve();
      scroller.scrollTop = Math.min(end, scroller.scrollTop + step);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await new Promise((r) => setTimeout(r, 100));  // the last long task is reported
  observer.disconnect();
  return { frames: frames.slice(1), long, height: scroller.scrollHeight };
}
"""


def _write(path: Path, cells: list[Any]) -> int:
    """Save the notebook (python3 kernelspec, not trusted: as a notebook one was sent); its
    size in bytes."""
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path.stat().st_size


def _open(server: Any, browser: Any, name: str, marker: str) -> dict[str, Any]:
    """One fresh page: the open time (ms), the elements per chat cell and the scroll's figures."""
    with browser_context(browser) as page:
        page.goto(f"{server.url}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function("() => !!window.jupyterapp", timeout=90_000, polling=50)
        path = f"b11/{name}.ipynb"
        args = {"path": path, "marker": "" if name == "empty" else marker}
        took = float(page.evaluate(_OPEN_TIMED, args))
        counts = page.evaluate(_ELEMENTS)
        figures = {"open_ms": took, "output_elements_per_cell": statistics.median(counts)}
        return {**figures, **_scroll(page)}


# Chromium's main-thread counters (seconds, cumulative), as the scroll's ms
METRICS = {"RecalcStyleDuration": "style_ms", "LayoutDuration": "layout_ms"}
METRICS |= {"ScriptDuration": "script_ms", "TaskDuration": "task_ms"}


def _metrics(cdp: Any) -> dict[str, float]:
    got = cdp.send("Performance.getMetrics")["metrics"]
    return {m["name"]: float(m["value"]) for m in got if m["name"] in METRICS}


def _scroll(page: Page) -> dict[str, Any]:
    """Scroll top to bottom: the frames, the long tasks, and where the main thread's time went."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    before = _metrics(cdp)
    result: dict[str, Any] = page.evaluate(_SCROLL, {"step": 120})
    after = _metrics(cdp)
    frames = sorted(result["frames"]) or [0.0]
    return {
        "frames": len(frames),
        "worst_frame_ms": frames[-1],
        "p95_frame_ms": frames[int(0.95 * (len(frames) - 1))],
        "frames_over_50ms": sum(f > FRAME_GOAL_MS for f in frames),
        "long_tasks": len(result["long"]),
        "long_task_ms": sum(result["long"]),
        "height_px": result["height"],
        **{METRICS[k]: 1000 * (after[k] - before[k]) for k in METRICS},
    }


# JupyterLab's windowing modes measured: its default (offscreen cells are neither laid out nor
# painted: content-visibility), judged; and none (every cell laid out: the browser tests'), shown
MODES = {"contentVisibility": "JupyterLab's default windowing", "none": "windowing none"}
TRACKER = "@jupyterlab/notebook-extension:tracker"
SETTINGS_PATH = "/lab/api/settings/" + urllib.parse.quote(TRACKER)


def _windowing(server: Any, mode: str) -> None:
    """The server's user setting; a page reads it when it loads."""
    current = server.api("GET", SETTINGS_PATH)
    merged = {**(current.get("settings") or {}), "windowingMode": mode}
    server.api("PUT", SETTINGS_PATH, {"raw": json.dumps(merged)})


def run(settings: Settings) -> list[Figure]:
    cells, cycles = (QUICK_CELLS, QUICK_CYCLES) if settings.quick else (CELLS, CYCLES)
    made = notebooks(cells, cycles)
    marker = f"answer-{cells - 1}-end"
    figures = []
    with lab_and_browser("b11-", shared=settings.quick) as (server, browser):
        before = server.api("GET", SETTINGS_PATH).get("settings") or {}
        sizes = {
            name: _write(server.root / "b11" / f"{name}.ipynb", nb_cells)
            for name, nb_cells in made.items()
        }
        # the smoke run: the judged mode only (JupyterLab's default)
        modes = list(MODES.items())[: 1 if settings.quick else None]
        for mode, label in modes:
            runs = 1 if settings.quick else (5 if mode == "contentVisibility" else 2)
            _windowing(server, mode)
            opened: dict[str, list[dict[str, Any]]] = {name: [] for name in NOTEBOOKS}
            for _ in range(runs):
                for name in NOTEBOOKS:  # alternating, so load falls on all alike
                    opened[name].append(_open(server, browser, name, marker))
            what = f"{cells} chat cells of {cycles}-cycle tool turns, no kernel, {label}"
            figures += _figures(what, opened, sizes, judged=mode == "contentVisibility")
        server.api("PUT", SETTINGS_PATH, {"raw": json.dumps(before)})  # as it found it
    return figures


# The breakdown table's columns: (figure key, heading), each the median of the runs
COLUMNS = [
    ("output_elements_per_cell", "elements/output"),
    ("open_ms", "open ms"),
    ("worst_frame_ms", "worst frame"),
    ("p95_frame_ms", "p95 frame"),
    ("frames_over_50ms", "frames >50"),
    ("long_tasks", "long tasks"),
    ("long_task_ms", "long-task ms"),
    ("style_ms", "style ms"),
    ("layout_ms", "layout ms"),
    ("script_ms", "script ms"),
    ("task_ms", "all tasks ms"),
]


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def _breakdown(what: str, opened: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Which step costs what: each notebook's medians, as a table __main__ prints."""
    rows = [
        [NOTEBOOKS[name], *(f"{_median(runs, key):,.0f}" for key, _ in COLUMNS)]
        for name, runs in opened.items()
    ]
    n = len(opened["ours"])
    return {
        "title": f"B11 scrolling, by step (median of {n}): {what}",
        "head": ["notebook", *(head for _, head in COLUMNS)],
        "rows": rows,
    }


def _figures(
    what: str,
    opened: dict[str, list[dict[str, Any]]],
    sizes: dict[str, int],
    *,
    judged: bool,
) -> list[Figure]:
    """The open ratio and the scroll's worst frame (median of the runs) of one windowing mode."""
    times = {name: [r["open_ms"] for r in runs] for name, runs in opened.items()}
    ours, html = statistics.median(times["ours"]), statistics.median(times["html"])
    ratio = ours / html
    details = {"runs": opened, "file_bytes": sizes, "table": _breakdown(what, opened)}
    worst = [r["worst_frame_ms"] for r in opened["ours"]]
    base, empty = (_median(opened[name], "worst_frame_ms") for name in ("html", "empty"))
    opened_met = judge_max(ratio, RATIO_GOAL) if judged else (None, "")
    framed = judge_max(statistics.median(worst), FRAME_GOAL_MS) if judged else (None, "")
    rows = [
        (
            f"open {what}: until the last conversation is drawn, ours / text/html "
            f"({ours:,.0f} / {html:,.0f} ms; {sizes['ours'] / 1e6:.1f} / "
            f"{sizes['html'] / 1e6:.1f} MB)",
            ratio, "x", [o / h for o, h in zip(times["ours"], times["html"], strict=True)],
            f"≤ {RATIO_GOAL}x", opened_met,
        ),
        (
            f"scroll it, {what.rsplit(', ', 1)[-1]}: worst frame, ours (text/html "
            f"{base:.0f} ms, no outputs {empty:.0f} ms; the table below)",
            statistics.median(worst), "ms", worst, f"≤ {FRAME_GOAL_MS:.0f} ms", framed,
        ),
    ]  # fmt: skip
    return [
        Figure(
            "B11",
            name,
            value,
            unit,
            Dist.of(values),
            goal if met is not None else "",
            met,
            margin,
            kind="goal" if met is not None else "info",
            details=details,
        )
        for name, value, unit, values, goal, (met, margin) in rows
    ]
