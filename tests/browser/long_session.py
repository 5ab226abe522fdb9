"""A long session in one page (issue 32, point 4): the driver behind B12 and its browser test.

One notebook, one JupyterLab page, `turns` `%%chat` cells run one after the other in one
thread. Each turn is one call of the `add` tool, which asks and is approved by a click, then an
answer streamed word by word. After each turn (its record has replaced the live view) the page
is measured: JS heap after a forced garbage collection (CDP `Runtime.getHeapUsage`), DOM nodes
(`document.getElementsByTagName('*')`) and the nodes inside the chat cells, event listeners
(CDP `Memory.getDOMCounters`), chat views out of the page that something still holds (CDP
`DOM.getDetachedDomNodes`), the comms the page's kernel connection holds and those the kernel
holds (with the live ipywidgets), and B4's first-delta-to-DOM latency of the answer: the
kernel's clock when the provider yields the answer's first delta (a
:class:`~tests.bench.scripts.FirstDeltaProvider`) to the page's clock when a MutationObserver
on the cell sees its marker in the chat view (the same machine, so one clock). Plain `print`
cells run afterwards in the same page give JupyterLab's own cost of a cell run.
"""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import asdict, dataclass
from typing import Any

from playwright.sync_api import CDPSession, expect

from .chat import LOAD, SETUP, chat_cell, run_setup, wait_widget
from .lab import Lab
from .server import REPO

__all__ = ["FIRST_CHAT", "PLAIN", "TurnFigures", "long_session_notebook", "run_long_session"]

FIRST_CHAT = 3  # LOAD, SETUP, the script; then one chat cell per turn
PLAIN = 4  # plain cells after the chat cells

# the answer after the tool: some markdown (a list, code), streamed word by word
_ANSWER = (
    "The sum is in. Here is what it means:\n\n- the tool ran once\n- its result is exact\n\n"
    "```python\ntotal = add(a, b)\nprint(total)\n```\n\nAnything else to add up?"
)

_SCRIPT = """import sys
sys.path.insert(0, {repo!r})
from tests.bench.scripts import FirstDeltaProvider, answer_cycle
_words = {words!r}
LONG = FirstDeltaProvider([
    part
    for i in range({turns})
    for part in (
        cycle(tool_call('add', {{'a': i, 'b': 1}})),
        answer_cycle([f"FIRST{{i}}TOKEN ", *_words], pause={pause}, lead={lead}),
    )
])"""

# A MutationObserver on the chat cell (B4's): when the turn's marker first shows in a live view.
_WATCH = """
([index, marker]) => {
  window.__b12?.observer?.disconnect();
  const cell = window.__jt.panel.content.widgets[index].node;
  const state = { marker, at: null, observer: null };
  state.observer = new MutationObserver(() => {
    const views = cell.querySelectorAll(".jt-root:not(.jt-saved)");
    if (state.at === null && [...views].some((view) => view.textContent.includes(marker))) {
      state.at = Date.now();
      state.observer.disconnect();
    }
  });
  state.observer.observe(cell, { childList: true, subtree: true, characterData: true });
  window.__b12 = state;
}
"""

# The page's own counts: every element, those inside chat cells, its kernel connection's comms.
_PAGE_COUNTS = """
(first) => {
  const panel = window.__jt.panel;
  const cells = panel.content.widgets.slice(first);
  const kernel = panel.sessionContext.session.kernel;
  return {
    elements: document.getElementsByTagName("*").length,
    cell_elements: cells.reduce((n, c) => n + c.node.getElementsByTagName("*").length, 0),
    page_comms: kernel._comms ? kernel._comms.size : -1,
    live_views: document.querySelectorAll(".jt-root:not(.jt-saved)").length,
  };
}
"""

# Run code on the page's kernel connection outside any cell (no output in the notebook, no
# history): what it printed.
_KERNEL_PRINT = """
async (code) => {
  const kernel = window.__jt.panel.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code, silent: false, store_history: false });
  let text = "";
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === "stream") text += msg.content.text;
  };
  await future.done;
  return text;
}
"""

# What the kernel holds: its open comms and its live ipywidgets.
_KERNEL_COUNTS = """import comm as _c, json as _j
from ipywidgets.widgets import widget as _w
print('B12' + _j.dumps({'kernel_comms': len(_c.get_comm_manager().comms),
                        'kernel_widgets': len(_w._instances)}))"""

# The output area of cell `index`, for CDP: its nodes (text included) are counted in the page.
_OUTPUT = "window.__jt.panel.content.widgets[{index}].node.querySelector('.jp-OutputArea')"
_COUNT_NODES = """
(index) => {
  const area = window.__jt.panel.content.widgets[index].node.querySelector(".jp-OutputArea");
  const walker = document.createTreeWalker(area, NodeFilter.SHOW_ALL);
  let n = 0;
  while (walker.nextNode()) n++;
  return n;
}
"""

_READ_FIRST_DELTAS = "print('B12' + __import__('json').dumps(LONG.first_delta_at))"


@dataclass
class TurnFigures:
    """What the page and the kernel hold after one finished turn."""

    turn: int
    heap_used: int  # bytes of JS heap in use after a full garbage collection
    elements: int  # every element of the page
    cell_elements: int  # the elements inside the chat cells (their saved records)
    dom_nodes: int  # CDP Memory.getDOMCounters: every node, text nodes included
    listeners: int  # CDP Memory.getDOMCounters: jsEventListeners
    page_comms: int  # comms the page's kernel connection holds
    live_views: int  # chat views not yet replaced by their record
    detached_views: int  # chat views out of the page but still held (CDP, after the GC)
    output_nodes: int  # the nodes of this cell's output area (its record), text included
    output_listeners: int  # the event listeners in this cell's output area
    kernel_comms: int
    kernel_widgets: int
    first_delta_ms: float | None = None  # B4: the answer's first delta → its text in the DOM

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def long_session_notebook(turns: int, *, pause: float, lead: float) -> list[str]:
    """The notebook: LOAD, SETUP, the script of `turns` turns, one chat cell per turn, then
    `PLAIN` plain cells (what running any cell costs the page, for comparison)."""
    script = _SCRIPT.format(
        repo=str(REPO),
        words=[w + " " for w in _ANSWER.split(" ")],
        turns=turns,
        pause=pause,
        lead=lead,
    )
    chats = [chat_cell(f"Turn {i}: add {i} and 1.", script="LONG") for i in range(turns)]
    plain = [f"print('plain cell {i}')" for i in range(PLAIN)]
    return [LOAD, SETUP, script, *chats, *plain]


def _output_listeners(cdp: CDPSession, index: int) -> int:
    """The event listeners on cell `index`'s output area and everything inside it."""
    found = cdp.send("Runtime.evaluate", {"expression": _OUTPUT.format(index=index)})
    object_id = found["result"]["objectId"]
    try:
        got = cdp.send("DOMDebugger.getEventListeners", {"objectId": object_id, "depth": -1})
    finally:
        cdp.send("Runtime.releaseObject", {"objectId": object_id})
    return len(got["listeners"])


def _detached_views(cdp: CDPSession) -> int:
    """Chat views (live or saved) no longer in the page that something still holds."""
    got = cdp.send("DOM.getDetachedDomNodes")
    return sum(
        1
        for node in got["detachedNodes"]
        if "jt-root" in _attribute(node["treeNode"].get("attributes", []), "class").split()
    )


def _attribute(pairs: list[str], name: str) -> str:
    """An attribute of a CDP node (its `attributes` are [name, value, name, value...])."""
    values = dict(zip(pairs[::2], pairs[1::2], strict=True))
    return values.get(name, "")


def _measure(lab: Lab, cdp: CDPSession, turn: int, index: int) -> TurnFigures:
    """Collect garbage, then read the heap, the DOM and the comms, after cell `index` ran."""
    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")
    counters = cdp.send("Memory.getDOMCounters")
    page = lab.page.evaluate(_PAGE_COUNTS, FIRST_CHAT)
    kernel = _kernel_print(lab, _KERNEL_COUNTS)
    return TurnFigures(
        turn=turn,
        heap_used=int(heap["usedSize"]),
        dom_nodes=int(counters["nodes"]),
        listeners=int(counters["jsEventListeners"]),
        detached_views=_detached_views(cdp),
        output_nodes=lab.page.evaluate(_COUNT_NODES, index),
        output_listeners=_output_listeners(cdp, index),
        **page,
        **kernel,
    )


def _one_turn(lab: Lab, turn: int) -> float | None:
    """Run turn `turn`'s cell, approve its call with a click, wait until its record replaced
    the live view; the page clock when the answer's first words showed (None: never seen)."""
    index = FIRST_CHAT + turn
    lab.page.evaluate(_WATCH, [index, f"FIRST{turn}TOKEN"])
    lab.run_cell(index, wait=False)
    root = wait_widget(lab, index)
    approve = root.get_by_role("button", name="Approve", exact=True)
    approve.click()
    saved = lab.cell_output(index).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message").last).to_contain_text("Anything else to add up?")
    expect(saved.locator(".jt-chip-approved")).to_have_count(1)
    lab.wait_cell_idle(index, timeout=60)
    # the observer saw the words as they streamed, before the record replaced the view (its
    # callbacks run before the page draws again): null when the view never showed them
    at = lab.page.evaluate("() => window.__b12.at")
    return float(at) if at is not None else None


def run_long_session(
    lab: Lab,
    name: str,
    turns: int,
    *,
    pause: float = 0.0,
    lead: float = 0.0,
    measured: Container[int] | None = None,
) -> tuple[list[TurnFigures], list[TurnFigures]]:
    """Play the session in `lab`'s page: the figures after each turn (only after the turns in
    `measured` where given: a measure collects the page's garbage and walks its heap, seconds
    on a big page), then after each plain cell run once the session is over. `pause` paces
    the answer's words, `lead` is the silence before its first one."""
    lab.write_notebook(name, long_session_notebook(turns, pause=pause, lead=lead))
    lab.open(name)
    run_setup(lab, FIRST_CHAT)
    cdp = lab.page.context.new_cdp_session(lab.page)
    cdp.send("HeapProfiler.enable")
    figures: list[TurnFigures] = []
    shown: list[float | None] = []
    try:
        for turn in range(turns):
            at = _one_turn(lab, turn)
            if measured is None or turn + 1 in measured:
                shown.append(at)
                figures.append(_measure(lab, cdp, turn + 1, FIRST_CHAT + turn))
        plain = []
        for k in range(PLAIN):
            lab.run_cell(FIRST_CHAT + turns + k)
            plain.append(_measure(lab, cdp, k + 1, FIRST_CHAT + turns + k))
    finally:
        cdp.detach()
    yielded: list[float] = _kernel_print(lab, _READ_FIRST_DELTAS)
    for figure, at in zip(figures, shown, strict=True):
        answer = yielded[2 * figure.turn - 1]  # each turn's second cycle is its answer
        figure.first_delta_ms = None if at is None else at - answer * 1000
    return figures, plain


def _kernel_print(lab: Lab, code: str) -> Any:
    """The JSON `code` printed after "B12", run on the page's kernel connection."""
    text: str = lab.page.evaluate(_KERNEL_PRINT, code)
    line = next(x for x in text.splitlines() if x.startswith("B12"))
    return json.loads(line[3:])
