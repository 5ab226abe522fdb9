"""B4 — first token: the provider yields the first delta (kernel clock) → its text is in the DOM
(browser clock), in a real JupyterLab in headless Chromium, on the same machine.

Uses ``tests/browser/lab.py`` (server, Chromium, ``Lab``). The kernel's provider is a
:class:`~tests.bench.scripts.FirstDeltaProvider` (a ScriptedProvider that notes ``time.time()``
as it yields a cycle's first Part); a MutationObserver on the chat cell notes ``Date.now()`` as
soon as that run's marker text appears in the cell. The same ``%%chat`` cell runs N times.

Two variants: ``lead`` 1 s — the model's time to first token, during which the view renders
(the goal figure); ``lead`` 0 — the first delta races the view's first render (the kernel's
delta is lost if the view is not there yet and the draft is re-sent on ``ready``). After the
first delta the answer goes on streaming (30 more deltas at 50/s), as a real one would: a turn
that ended right after its first delta would flood the page with its end-of-turn messages
(events, records, status) before the first frame, and measure those instead.

The package runs as installed, with its default set-up: if the view does not render in the
first run of a variant, that variant reports a missed "renders" goal instead of timings.
"""

from __future__ import annotations

import contextlib
import json
import statistics
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.browser.lab import Lab, browser_context

from .browsers import lab_and_browser
from .common import REPO, Dist, Figure, Settings, judge_max

GOAL_MS = 50.0

_SETUP = """%load_ext jupyter_turns
import sys
sys.path.insert(0, {repo!r})
from tests.bench.scripts import FirstDeltaProvider, answer_cycle
_more = [f"word{{k}} " for k in range(30)]
B4 = FirstDeltaProvider(
    [answer_cycle([f"FIRST{{i}}TOKEN ", *_more], pause=0.02, lead={lead}) for i in range({n})]
)"""

# When the widget's comm handler gets the marker message: JupyterLab has read the frame, run its
# ordered message chain and dispatched the comm message (private fields of @jupyterlab/services
# 4.6: kernel._comms, comm._onMsg). Returns false until the widget's comm exists.
_HOOK_COMM = """
(index) => {
  const cell = window.__jt.panel.content.widgets[index];
  const outputs = cell.model.outputs;
  let modelId = null;
  for (let i = 0; i < outputs.length; i++) {
    const view = outputs.get(i).data["application/vnd.jupyter.widget-view+json"];
    if (view) modelId = view.model_id;
  }
  const kernel = window.__jt.panel.sessionContext.session.kernel;
  const comm = modelId && kernel._comms && kernel._comms.get(modelId);
  if (!comm || !comm._onMsg) return false;
  if (comm.__b4) return true;
  const original = comm._onMsg;
  comm._onMsg = (msg) => {
    const b4 = window.__b4;
    if (b4 && b4.labAt === null && JSON.stringify(msg.content.data).includes(b4.marker)) {
      b4.labAt = Date.now();
    }
    return original(msg);
  };
  comm.__b4 = true;
  return true;
}
"""

# Instrumentation only (no behaviour change): when the sink hands the first draft message of
# each run to the comm, on the kernel clock.
_PROBE = """
import time
from jupyter_turns.widget.renderer import WidgetSink
B4_SENT = []
_b4_send = WidgetSink._send
def _b4_probe(self, message):
    if message.get("type") in ("delta", "draft") and len(B4_SENT) < len(B4.first_delta_at):
        B4_SENT.append(time.time())
    _b4_send(self, message)
WidgetSink._send = _b4_probe
"""

_CHAT = "%%chat --provider scripted --script B4 --new\nSay something."

_READ = "import json; print(json.dumps([B4.first_delta_at, B4_SENT]))"

# Installed before JupyterLab's scripts: note when a websocket frame carrying the marker arrives.
_WS_PROBE = """
(() => {
  const Native = window.WebSocket;
  const decoder = new TextDecoder();
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const b4 = window.__b4;
        if (!b4 || b4.wsAt !== null) return;
        const data = event.data;
        const text = typeof data === "string" ? data : decoder.decode(data);
        if (text.includes(b4.marker)) b4.wsAt = Date.now();
      });
    }
  };
})();
"""

# A MutationObserver on the chat cell: the time the run's marker first appears in its DOM.
_WATCH = """
([index, marker]) => {
  window.__b4?.observer?.disconnect();
  const cell = window.__jt.panel.content.widgets[index].node;
  const state = { marker, at: null, wsAt: null, labAt: null, observer: null };
  state.observer = new MutationObserver(() => {
    // only the widget's view counts (the final record's folded transcript holds the text too)
    const views = cell.querySelectorAll(".jt-root");
    if (state.at === null && [...views].some((view) => view.textContent.includes(marker))) {
      state.at = Date.now();
      state.observer.disconnect();
    }
  });
  state.observer.observe(cell, { childList: true, subtree: true, characterData: true });
  window.__b4 = state;
}
"""


def _runs(lab: Lab, name: str, lead: float, n: int) -> dict[str, list[float]] | str:
    """Per measured run: kernel yield → sink send → websocket frame → DOM, in ms; or, if the
    view did not render in the set-up check, what the cell showed instead."""
    skip = 2  # runs before the measured ones: the set-up check, then a warm-up
    setup = _SETUP.format(repo=str(REPO), lead=lead, n=n + skip)
    lab.write_notebook(name, [setup + "\n" + _PROBE, _CHAT, _READ])
    lab.page.add_init_script(_WS_PROBE)
    lab.open(name)
    lab.run_cell(0, timeout=60)
    seen: list[dict[str, Any]] = []
    for i in range(n + skip):
        lab.page.evaluate(_WATCH, [1, f"FIRST{i}TOKEN"])
        lab.run_cell(1, wait=False)
        if lead >= 0.5:  # time to hook the widget's comm before the first delta
            with contextlib.suppress(PlaywrightTimeoutError):
                lab.page.wait_for_function(_HOOK_COMM, arg=1, timeout=lead * 800, polling=10)
        lab.wait_cell_idle(1, timeout=60)
        with contextlib.suppress(PlaywrightTimeoutError):
            lab.page.wait_for_function("() => window.__b4.at !== null", timeout=5_000)
        seen.append(
            lab.page.evaluate(
                "() => ({at: window.__b4.at, wsAt: window.__b4.wsAt, labAt: window.__b4.labAt})"
            )
        )
        if i == 0 and seen[0]["at"] is None:
            shown = lab.cell_output(1).inner_text()[:200]
            return f"the view did not render; the cell showed {shown!r}"
    lab.run_cell(2, timeout=30)
    yielded, sent = json.loads(lab.cell_output(2).inner_text().strip())
    # the set-up check and one warm-up run (the widget's code loads once per page) come first
    seen, yielded, sent = seen[skip:], yielded[skip:], sent[skip:]
    out: dict[str, list[float]] = {
        "total": [],
        "kernel": [],
        "wire": [],
        "page": [],
        "lab": [],
        "view": [],
    }
    for page, t_yield, t_sent in zip(seen, yielded, sent, strict=True):
        if page["at"] is None:
            raise RuntimeError("B4: the text never appeared in the widget's view")
        out["total"].append(page["at"] - t_yield * 1000)
        out["kernel"].append((t_sent - t_yield) * 1000)
        if page["wsAt"] is not None:
            out["wire"].append(page["wsAt"] - t_sent * 1000)
            out["page"].append(page["at"] - page["wsAt"])
            if page["labAt"] is not None:
                out["lab"].append(page["labAt"] - page["wsAt"])
                out["view"].append(page["at"] - page["labAt"])
    return out


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _not_rendered(lead: float, why: str) -> Figure:
    return Figure(
        "B4",
        f"chat view renders in JupyterLab, default set-up (first token after {lead:g} s)",
        0.0,
        "views",
        goal="renders",
        met=False,
        margin="never rendered",
        details={"note": why},
    )


def _figure(lead: float, stages: dict[str, list[float]], errors: list[str]) -> Figure:
    warm = stages["total"]
    dist = Dist.of(warm)
    details: dict[str, Any] = {
        "runs_ms": [round(x, 1) for x in warm],
        "p90_ms": statistics.quantiles(warm, n=10)[-1] if len(warm) >= 2 else warm[0],
        "median_stage_ms": {
            "kernel: yield → sink hands it to the comm": _median(stages["kernel"]),
            "wire: comm → websocket frame in the page": _median(stages["wire"]),
            "page: websocket frame → text in DOM": _median(stages["page"]),
            "  of which JupyterLab: frame → widget comm handler": _median(stages["lab"]),
            "  of which widget: comm handler → text in DOM": _median(stages["view"]),
        },
    }
    if errors:
        details["page_errors"] = errors[:3]
    if not lead:
        name = "first delta → text in DOM, first delta at once (races the view's render)"
        return Figure("B4", name, dist.median, "ms", dist, kind="info", details=details)
    met, margin = judge_max(dist.median, GOAL_MS)
    name = f"first delta → text in DOM, JupyterLab (model's first token after {lead:g} s)"
    return Figure(
        "B4", name, dist.median, "ms", dist, f"< {GOAL_MS:g} ms", met, margin, details=details
    )


def run(settings: Settings) -> list[Figure]:
    n = settings.pick(20, 2)
    results: dict[float, dict[str, list[float]] | str] = {}
    errors: list[str] = []
    with lab_and_browser("jt-bench-b4-", shared=settings.quick) as (server, browser):
        for lead in settings.pick((1.0, 0.0), (0.2,)):
            with browser_context(browser) as page:
                lab = Lab(server, page, f"b4-lead-{lead:g}")
                try:
                    results[lead] = _runs(lab, f"b4_{lead:g}.ipynb", lead, n)
                finally:
                    errors += lab.unexpected_page_errors()
                    lab.close()
    return [
        _not_rendered(lead, got) if isinstance(got, str) else _figure(lead, got, errors)
        for lead, got in results.items()
    ]
