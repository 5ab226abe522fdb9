"""B11 — opening a notebook full of conversations in JupyterLab, and scrolling through it.

The notebook: 40 ``%%chat`` cells, one thread, each cell a 20-cycle tool turn (19 answers that
call a tool whose result is a ~1.5 KB DataFrame summary, then a ~2 KB markdown answer with a
table and code). The turns are played by the scripted provider through ``Chat`` in this
process, and each cell's output is what a chat cell saves: ``record_bundle(turn_record(...))``
(the record, its sanitized ``text/html`` transcript, a ``text/plain`` line). The baseline is the
same notebook with the record taken out of each output: what JupyterLab draws without us (its
own HTML renderer on the transcript).

Each notebook is opened with no kernel ("No Kernel") on a JupyterLab server of its own (the
browser tests' ``start_lab_server``) in headless Chromium, a fresh page each time, under
JupyterLab's default windowing mode (``contentVisibility``: every cell's outputs are rendered,
offscreen cells are not laid out or painted; judged) and under ``none`` (every cell laid out,
as in the browser tests; shown).

Timed in the page: from the ``docmanager:open`` command to the frame after the last cell's
conversation shows its final answer; ours against the baseline, alternating, median of the runs.
Then the page scrolls the notebook from top to bottom, one step per frame, while a
``PerformanceObserver`` counts long tasks (> 50 ms) and every frame's time is kept: the worst
frame is the goal, long tasks are reported.
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


def notebooks(cells: int, cycles: int) -> tuple[list[Any], list[Any]]:
    """Ours and the baseline (the same outputs without the record)."""
    bundles = asyncio.run(_records(cells, cycles))
    made = []
    for keep in (True, False):
        nb_cells = [nbformat.v4.new_code_cell("%load_ext jupyter_turns")]
        for n, bundle in enumerate(bundles):
            data = bundle if keep else {k: v for k, v in bundle.items() if k != RECORD_MIME}
            cell = nbformat.v4.new_code_cell(f"%%chat\nQuestion {n}: what stands out?")
            cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
            nb_cells.append(cell)
        made.append(nb_cells)
    return made[0], made[1]


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
      if (cells.length > 1 && last.outputArea.node.textContent.includes(marker)) resolve();
      else requestAnimationFrame(check);
    };
    check();
  });
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}
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


def _open(server: Any, browser: Any, name: str, marker: str) -> tuple[float, dict[str, Any]]:
    """One fresh page: the open time (ms) and the scroll's figures."""
    with browser_context(browser) as page:
        page.goto(f"{server.url}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function("() => !!window.jupyterapp", timeout=90_000, polling=50)
        path = f"b11/{name}"
        took = float(page.evaluate(_OPEN_TIMED, {"path": path, "marker": marker}))
        scrolled: dict[str, Any] = _scroll(page)
        return took, scrolled


def _scroll(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(_SCROLL, {"step": 120})
    frames = sorted(result["frames"]) or [0.0]
    return {
        "frames": len(frames),
        "worst_frame_ms": frames[-1],
        "p95_frame_ms": frames[int(0.95 * (len(frames) - 1))],
        "frames_over_50ms": sum(f > FRAME_GOAL_MS for f in frames),
        "long_tasks": len(result["long"]),
        "long_task_ms": sum(result["long"]),
        "height_px": result["height"],
    }


# JupyterLab's windowing modes measured: its default (offscreen cells are neither laid out nor
# painted: content-visibility), judged; and none (every cell laid out: the browser tests'), shown
MODES = {"contentVisibility": "JupyterLab's default windowing", "none": "windowing none"}
TRACKER = "@jupyterlab/notebook-extension:tracker"


def _windowing(server: Any, mode: str) -> None:
    """The server's user setting; a page reads it when it loads."""
    path = "/lab/api/settings/" + urllib.parse.quote(TRACKER)
    current = server.api("GET", path)
    merged = {**(current.get("settings") or {}), "windowingMode": mode}
    server.api("PUT", path, {"raw": json.dumps(merged)})


def run(settings: Settings) -> list[Figure]:
    cells, cycles = (QUICK_CELLS, QUICK_CYCLES) if settings.quick else (CELLS, CYCLES)
    ours_nb, html_nb = notebooks(cells, cycles)
    marker = f"answer-{cells - 1}-end"
    figures = []
    with lab_and_browser("b11-") as (server, browser):
        sizes = {
            name: _write(server.root / "b11" / f"{name}.ipynb", nb_cells)
            for name, nb_cells in (("ours", ours_nb), ("html", html_nb))
        }
        for mode, label in MODES.items():
            runs = 1 if settings.quick else (5 if mode == "contentVisibility" else 3)
            _windowing(server, mode)
            times: dict[str, list[float]] = {"ours": [], "html": []}
            scrolls: dict[str, list[dict[str, Any]]] = {"ours": [], "html": []}
            for _ in range(runs):
                for name in ("ours", "html"):
                    took, scrolled = _open(server, browser, f"{name}.ipynb", marker)
                    times[name].append(took)
                    scrolls[name].append(scrolled)
            what = f"{cells} chat cells of {cycles}-cycle tool turns, no kernel, {label}"
            judged = mode == "contentVisibility"
            figures += _figures(what, times, scrolls, sizes, judged=judged)
    return figures


def _figures(
    what: str,
    times: dict[str, list[float]],
    scrolls: dict[str, list[dict[str, Any]]],
    sizes: dict[str, int],
    *,
    judged: bool,
) -> list[Figure]:
    """The open ratio and the scroll's worst frame (median of the runs) of one windowing mode."""
    ours, html = statistics.median(times["ours"]), statistics.median(times["html"])
    ratio = ours / html
    details = {"times_ms": times, "scrolls": scrolls, "file_bytes": sizes}
    worst = [s["worst_frame_ms"] for s in scrolls["ours"]]
    base = [s["worst_frame_ms"] for s in scrolls["html"]]
    long_ours = statistics.median(s["long_tasks"] for s in scrolls["ours"])
    long_html = statistics.median(s["long_tasks"] for s in scrolls["html"])
    p95 = statistics.median(s["p95_frame_ms"] for s in scrolls["ours"])
    opened = judge_max(ratio, RATIO_GOAL) if judged else (None, "")
    framed = judge_max(statistics.median(worst), FRAME_GOAL_MS) if judged else (None, "")
    rows = [
        (
            f"open {what}: until the last conversation is drawn, ours / text/html "
            f"({ours:,.0f} / {html:,.0f} ms; {sizes['ours'] / 1e6:.1f} / "
            f"{sizes['html'] / 1e6:.1f} MB)",
            ratio, "x", [o / h for o, h in zip(times["ours"], times["html"], strict=True)],
            f"≤ {RATIO_GOAL}x", opened,
        ),
        (
            f"scroll it, {what.rsplit(', ', 1)[-1]}: worst frame, ours (p95 {p95:.0f} ms, "
            f"{long_ours:.0f} long tasks; text/html: worst {statistics.median(base):.0f} ms, "
            f"{long_html:.0f} long tasks)",
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
