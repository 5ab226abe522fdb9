"""B12 — a long session in one page: 30 turns with tools in one JupyterLab page (issue 32,
point 4), each one `add` call approved by a click and an answer streamed at 50 words/s after
1 s (B4's goal set-up). The driver is ``tests/browser/long_session.py`` (its browser test
asserts what is not a timing: no comm, widget or chat view outlives its turn).

Figures, per finished turn after a forced garbage collection, between turn 5 (the page has
loaded what it loads once) and turn 30: JS heap, DOM nodes and event listeners, each beside
what a plain ``print`` cell run in the same page costs (JupyterLab's own bookkeeping of any
run); comms of the page and of the kernel; and B4's first delta → text in DOM at the first
turns against the last (the goal: the last within 1.5× of the first).
"""

from __future__ import annotations

import statistics
from typing import Any

from tests.browser.lab import Lab, browser_context
from tests.browser.long_session import TurnFigures, run_long_session

from .browsers import lab_and_browser
from .common import Figure, Settings, judge_max

GOAL_RATIO = 1.5
SETTLED = 5  # the first turn compared: the widget's code and styles load in the first ones
SPAN = 5  # turns per end for the latency medians (one turn's figure is noisy)


def _session(
    turns: int, lead: float, shared: bool
) -> tuple[list[TurnFigures], list[TurnFigures], list[str]]:
    with (
        lab_and_browser("jt-bench-b12-", shared=shared) as (server, browser),
        browser_context(browser) as page,
    ):
        lab = Lab(server, page, "b12")
        try:
            figures, plain = run_long_session(lab, "b12.ipynb", turns, pause=0.02, lead=lead)
            return figures, plain, lab.unexpected_page_errors()
        finally:
            lab.close()


def _per_run(rows: list[TurnFigures], field: str) -> float:
    first, last = rows[0], rows[-1]
    return float(getattr(last, field) - getattr(first, field)) / (last.turn - first.turn)


def _growth(figures: list[TurnFigures], plain: list[TurnFigures], first: int) -> list[Figure]:
    settled = figures[first - 1 :]
    rows = []
    for field, unit, what in (
        ("heap_used", "KB", "JS heap"),
        ("dom_nodes", "nodes", "DOM nodes"),
        ("listeners", "listeners", "event listeners"),
    ):
        scale = 1024 if unit == "KB" else 1
        chat = _per_run(settled, field) / scale
        lab = _per_run(plain, field) / scale
        details = {
            f"turn {f.turn}": round(getattr(f, field) / scale, 1) for f in (figures[0], *settled)
        }
        details["plain cell run (JupyterLab's own)"] = round(lab, 1)
        name = f"{what} per turn, turns {first}→{figures[-1].turn}"
        rows.append(Figure("B12", name, chat, unit, kind="info", details=details))
    last = figures[-1]
    rows.append(
        Figure(
            "B12",
            f"record drawn per turn (nodes of its output area), turn {last.turn}",
            float(last.output_nodes),
            "nodes",
            kind="info",
        )
    )
    return rows


def _leaks(figures: list[TurnFigures], first: int) -> Figure:
    early, late = figures[first - 1], figures[-1]
    fields = ("page_comms", "kernel_comms", "kernel_widgets", "live_views", "detached_views")
    grown = {f: getattr(late, f) - getattr(early, f) for f in fields}
    details: dict[str, Any] = {f"turn {early.turn}": {f: getattr(early, f) for f in fields}}
    details[f"turn {late.turn}"] = {f: getattr(late, f) for f in fields}
    total = float(sum(grown.values()))
    met = total <= 0
    return Figure(
        "B12",
        f"comms, widgets and chat views left over, turns {early.turn}→{late.turn}",
        total,
        "objects",
        goal="0",
        met=met,
        margin="none" if met else str(grown),
        details=details,
    )


def _latency(figures: list[TurnFigures], span: int) -> list[Figure]:
    times = [f.first_delta_ms for f in figures]
    if any(t is None for t in times):
        missing = [f.turn for f in figures if f.first_delta_ms is None]
        note = {"note": f"the answer's first words never showed in turns {missing}"}
        return [Figure("B12", "first delta → DOM seen", 0.0, "turns", met=False, details=note)]
    ms = [float(t) for t in times if t is not None]
    first = statistics.median(ms[1 : 1 + span])  # turn 1 loads the widget's code: B4 skips it
    last = statistics.median(ms[-span:])
    ratio = last / first
    met, margin = judge_max(ratio, GOAL_RATIO)
    details = {
        "per turn ms": [round(t, 1) for t in ms],
        f"median turns 2-{1 + span} ms": round(first, 1),
        f"median turns {len(ms) - span + 1}-{len(ms)} ms": round(last, 1),
    }
    return [
        Figure("B12", "first delta → DOM, turn 1", ms[0], "ms", kind="info"),
        Figure("B12", f"first delta → DOM, turn {len(ms)}", ms[-1], "ms", kind="info"),
        Figure(
            "B12",
            f"first delta → DOM, last {span} turns / turns 2-{1 + span} (medians)",
            ratio,
            "x",
            goal=f"<= {GOAL_RATIO:g}x",
            met=met,
            margin=margin,
            details=details,
        ),
    ]


def run(settings: Settings) -> list[Figure]:
    # the smoke run: every figure from 3 turns (the first compared is turn 2, medians of 2
    # turns), the first words after 0.2 s
    first, span = settings.pick((SETTLED, SPAN), (2, 2))
    turns = settings.pick(30, first + 1)
    figures, plain, errors = _session(turns, settings.pick(1.0, 0.2), settings.quick)
    rows = [*_growth(figures, plain, first), _leaks(figures, first), *_latency(figures, span)]
    if errors:
        rows[0].details["page_errors"] = errors[:3]
    return rows
