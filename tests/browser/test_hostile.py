"""Hostile content in the real browser: XSS payloads in every place a model or a tool controls.

Every payload calls `pwn(<id>)` if it runs, a function the test exposes to every frame of every
page of the browser context (popups and iframes included), so an execution anywhere is recorded
in Python with the phase it happened in. The id says where the payload was placed:
`place * 100 + payload number`. Before each payload its canary `cnry<id>` is written as text:
where markdown is rendered, every canary must come out as text — proof that the payload reached
the HTML parser and was not swallowed by an earlier one.

Places (one `%%chat` turn): reasoning, message text (both streamed in 7-character deltas, so
payloads are split across draft messages), tool arguments, a tool's result, tool names the model
invents (unknown tools), a tool's question to the user. Renderings: the live widget and the live
folded transcript; after saving, a reopened notebook with a new kernel (the saved transcript,
`%chat history`, and the widget drawing the events loaded from the saved file); without a kernel
(the saved transcripts). Every link in them is clicked, every fold opened.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

import nbformat
import pytest
from playwright.sync_api import Locator, Page, expect

from .chat import LOAD, SETUP, chat_cell, run_setup, start_chat, wait_turn_end, wait_widget
from .lab import Lab
from .server import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.own_context]  # it changes its context

_B64 = base64.b64encode(b"<script>pwn(ID)</script>").decode()

# `ID` becomes the placement's id. Payloads that can leave the HTML parser in a raw-text or
# foreign-content state come last; each is followed by a closing-tags block.
PAYLOADS = [
    "<img src=x onerror=pwn(ID)>",
    "<script>pwn(ID)</script>",
    "[markdown link](javascript:pwn(ID))",
    '<a href="javascript:pwn(ID)">html link</a>',
    "[entity link](&#106;avascript&#58;pwn(ID))",
    '<a href="&#x6A;ava&#x09;script&colon;pwn(ID)">entity html link</a>',
    '<a href="  JaVaScRiPt:pwn(ID)">spaced link</a>',
    "<javascript:pwn(ID)>",
    "[reference link][rID]\n\n[rID]: javascript:pwn(ID)",
    f"[data link](data:text/html;base64,{_B64})",
    '<a href="data:text/html,<script>pwn(ID)</script>">data html link</a>',
    '<a href="https://example.org/ID" onclick="pwn(ID)">link with onclick</a>',
    '[titled](https://example.org/ID "t" onmouseover=pwn(ID))',
    "<svg onload=pwn(ID)>",
    "<svg><animate onbegin=pwn(ID) attributeName=x dur=1s></animate></svg>",
    '<iframe srcdoc="<img src=x onerror=pwn(ID)>"></iframe>',
    '<iframe src="javascript:pwn(ID)"></iframe>',
    '<object data="javascript:pwn(ID)"></object>',
    '<embed src="javascript:pwn(ID)">',
    '<div style="background-image:url(javascript:pwn(ID));width:expression(pwn(ID))">x</div>',
    "<details open ontoggle=pwn(ID)><summary>toggle</summary>body</details>",
    "<input autofocus onfocus=pwn(ID)>",
    "<body onload=pwn(ID)>",
    "<video><source onerror=pwn(ID)></video>",
    "<audio src=x onerror=pwn(ID)></audio>",
    "<marquee onstart=pwn(ID)>marquee</marquee>",
    '<form><button formaction="javascript:pwn(ID)">go</button></form>',
    '<meta http-equiv="refresh" content="0;url=javascript:pwn(ID)">',
    '<math href="javascript:pwn(ID)">math link</math>',
    '![markdown image](x" onerror="pwn(ID))',
    '<img src="data:image/png;base64,iVBORw0KGgo=" onerror=pwn(ID)>',
    '<img src="https://example.org/ID.png" onerror=pwn(ID)>',
    "`` <img src=x onerror=pwn(ID)> ``",
    "\n````\n<img src=x onerror=pwn(ID)>\n````\n",  # breaks out of a fenced block
    "</summary></details><img src=x onerror=pwn(ID)>",  # out of the transcript's fold
    "<template><img src=x onerror=pwn(ID)></template>",
    "<math><mtext><table><mglyph><style><img src=x onerror=pwn(ID)>",
    '<noscript><p title="</noscript><img src=x onerror=pwn(ID)>">',
    '<svg></p><style><a id="</style><img src=1 onerror=pwn(ID)>">',
    "<form><math><mtext></form><form><mglyph><style></math><img src onerror=pwn(ID)>",
    "<img src=x onerror=pwn(ID)",  # never closed
]
CLOSE = (
    "</style></noscript></template></textarea></title></xmp></noembed></noframes>"
    "</iframe></select></table></math></svg></form>"
)
# The transcripts: markdown or HTML outputs (not the widget, not text/plain).
RENDERED = (
    '.jp-OutputArea-output:is([data-mime-type="text/markdown"], [data-mime-type="text/html"])'
)
# A chat cell's one saved output, drawn by the extension's record renderer
RECORD = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter-turns+json"]'

# Where each placement is drawn: the checks below look at all of them.
RENDERINGS = [
    "live widget (streamed)",
    "the record that replaces the widget when the turn ends",
    "saved record, reopened with a kernel",
    "%chat history, reopened with a kernel",
    "widget redrawn from the saved file",
    "saved record without a kernel",
    "saved %chat history without a kernel",
    "saved record in an untrusted copy (someone else's notebook)",
    "saved %chat history in the untrusted copy",
]
PLACES = {1: "reasoning", 2: "message", 3: "tool arguments", 4: "tool result", 5: "tool name",
          6: "inquiry question"}  # fmt: skip


def placed(place: int, number: int) -> tuple[int, str]:
    """The id of payload `number` (1-based) in `place`, and the payload with that id."""
    pid = place * 100 + number
    return pid, PAYLOADS[number - 1].replace("ID", str(pid))


def block_text(place: int) -> str:
    """All payloads for one place as markdown blocks: canary, payload, closing tags."""
    items = []
    for number in range(1, len(PAYLOADS) + 1):
        pid, payload = placed(place, number)
        items.append(f"cnry{pid}\n\n{payload}\n\n{CLOSE}")
    return "\n\n".join(items)


def payload_file() -> dict[str, Any]:
    return {
        "reasoning": block_text(1),
        "message": block_text(2),
        "arguments": block_text(3),
        "result": block_text(4),
        "names": [
            f"cnry{pid} {p}" for pid, p in (placed(5, n) for n in range(1, len(PAYLOADS) + 1))
        ],
        "question": block_text(6),
    }


HOSTILE = '''\
import json
P = json.load(open("payloads.json"))

@tool
def search(query: str) -> str:
    """Search the web."""
    return P["result"]

@tool(run="unattended")
async def confirm(ctx: ToolContext) -> str:
    """Ask the user before going on."""
    return await ctx.ask(P["question"], ["ok"])

def chunks(text):
    return max(1, len(text) // 7)

script = [
    slow(cycle(
        reasoning(P["reasoning"], chunks=chunks(P["reasoning"])),
        message(P["message"], chunks=chunks(P["message"])),
        tool_call("search", {"query": P["arguments"]}),
        tool_call("confirm", {}),
        *[tool_call(name, {}) for name in P["names"]],
    ), 0.01, every=4),
    cycle(message("Done.")),
]
'''

# The saved conversation drawn again by the widget, in a kernel that did not run the turn.
REDRAW = """\
from jupyter_turns.record.notebook import find_notebook, load
from jupyter_turns.widget.chat_widget import ChatWidget
saved = load(find_notebook(globals()))["main"]
redraw = ChatWidget(thread="main", settings={"reasoning": "full", "thread": "main"})
redraw.events = [event.model_dump(mode="json") for event in saved.events]
redraw
"""

# Text that the HTML parser produced as text (not inside raw-text elements), folds included.
_LIVE_TEXT = """
(roots) => {
  const skip = new Set(["STYLE", "SCRIPT", "TEMPLATE", "NOSCRIPT", "TEXTAREA", "TITLE", "XMP",
                        "IFRAME", "NOEMBED", "NOFRAMES"]);
  const out = [];
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      let el = node.parentElement;
      while (el && el !== root && !skip.has(el.tagName)) el = el.parentElement;
      if (!el || el === root) out.push(node.data);
    }
  }
  return out.join(" ");
}
"""

# A payload the test itself inserts: it must run, and it resolves once Python has recorded it.
_CONTROL = """
() => {
  window.__jtControl = window.__jtControl || 0;
  const img = document.createElement("img");
  img.className = "jt-control";
  img.onerror = () => window.pwn(0).then(() => { window.__jtControl += 1; img.remove(); });
  img.src = "control-" + Math.random();
  document.body.appendChild(img);
  return window.__jtControl + 1;
}
"""

_SETTLED = """
(n) => window.__jtControl >= n && [...document.images].every((img) => img.complete)
"""


# `pwn(id)` in every frame: finds the element that ran the payload (the event's target, the
# running script, or the frame's element in its parent) and reports where it sits.
_PWN = """
window.pwn = (id) => {
  let el = null;
  try {
    const ev = window.event;
    el = (ev && ev.target instanceof Element && ev.target) || document.currentScript || null;
  } catch (e) {}
  let win = window;
  while (!el && win !== win.parent) {
    try { el = win.frameElement; } catch (e) { break; }
    win = win.parent;
  }
  while (el && el.ownerDocument.defaultView !== window.top) {
    el = el.ownerDocument.defaultView.frameElement;
  }
  let where = "unknown element";
  const cell = el && el.closest(".jp-Cell");
  if (cell) {
    const index = [...cell.parentElement.children].filter((c) => c.classList.contains("jp-Cell"))
      .indexOf(cell);
    const surface = el.closest(".jt-root") ? "widget"
      : el.closest("[data-mime-type]")?.getAttribute("data-mime-type") ?? "cell";
    where = `cell ${index} ${surface}`;
  } else if (el) {
    where = el.tagName.toLowerCase();
  }
  return window.__pwnRecord(id, where);
};
"""


class Sentinel:
    """Records every `pwn(id)` call from any page or frame, with the phase it happened in."""

    def __init__(self, page: Page) -> None:
        self.phase = "setup"
        self.hits: list[tuple[str, int, str]] = []
        self.popups: list[str] = []
        self._open: list[Page] = []
        self.links = 0
        page.context.expose_function("__pwnRecord", self._hit)
        page.context.add_init_script(_PWN)
        page.context.on("page", self._popup)

    def _hit(self, pid: Any, where: Any) -> None:
        self.hits.append((self.phase, int(pid), str(where)))

    def _popup(self, popup: Page) -> None:
        self._open.append(popup)

    def close_popups(self) -> None:
        for popup in self._open:
            self.popups.append(popup.url)
            popup.close()
        self._open = []

    def settle(self, page: Page) -> None:
        """Wait until a control payload ran and every image finished loading or failing: the
        error handlers of earlier payload images have run by then."""
        target = page.evaluate(_CONTROL)
        page.wait_for_function(_SETTLED, arg=target, timeout=15_000, polling=50)

    def real_hits(self) -> list[tuple[str, int, str]]:
        return [h for h in self.hits if h[1] != 0]


def reopen(lab: Lab, name: str, *, kernel: bool) -> None:
    """Open the notebook again; the page's address then loses `?reset`, which would otherwise
    reset the workspace (close the notebook) when a clicked `#fragment` link re-routes."""
    lab.close_and_reopen(name, kernel=kernel)
    lab.page.evaluate("() => history.replaceState(null, '', location.pathname)")


def wait_drawn(where: Locator) -> None:
    """Wait until every element of `where` shows the whole conversation, which ends with the
    answer "Done." (an output's element exists before its renderer has filled it)."""
    expect(where.first).to_be_attached()
    expect(where.filter(has_not_text="Done.")).to_have_count(0)


def open_folds_and_click_links(lab: Lab, sentinel: Sentinel, where: Locator) -> None:
    """Open every <details> and click every link inside `where`, once it is drawn."""
    page = lab.page
    wait_drawn(where.locator(f"{RENDERED}, .jt-root"))
    where.locator("details:not([open])").evaluate_all(
        "(ds) => ds.forEach((d) => { d.open = true; })"
    )
    links = where.locator("a[href]")
    sentinel.links += links.count()
    # From script, so that hidden, covered or moving (marquee) links are clicked too: the same
    # events a user's pointer sends (handlers run, javascript: URLs run, _blank opens a popup).
    links.evaluate_all(_CLICK_ALL)
    if page.locator(".jp-Dialog").count():
        page.keyboard.press("Escape")
    sentinel.close_popups()
    expect(lab.cell(3)).to_be_attached()  # no click took the notebook away


_CLICK_ALL = """
(links) => {
  for (const a of links) {
    for (const type of ["mouseover", "mouseenter", "mousedown", "focus", "mouseup"]) {
      a.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, view: window }));
    }
    a.click();
  }
}
"""


def canaries_missing(where: Locator) -> list[int]:
    """Placements whose canary is not text in the rendered element(s) `where`."""
    text = where.evaluate_all(_LIVE_TEXT)
    return [
        pid
        for place in PLACES
        for pid in (placed(place, n)[0] for n in range(1, len(PAYLOADS) + 1))
        if f"cnry{pid}" not in text
    ]


def test_xss_payloads_never_run_live_from_a_saved_record_or_without_a_kernel(lab: Lab) -> None:
    sentinel = Sentinel(lab.page)
    (lab.dir / "payloads.json").write_text(json.dumps(payload_file()))
    lab.write_notebook(
        "hostile.ipynb",
        [LOAD, SETUP, HOSTILE, chat_cell("Summarize this page."), "%chat restore", "%chat history",
         REDRAW],
    )  # fmt: skip
    lab.open("hostile.ipynb")
    lab.page.evaluate("() => history.replaceState(null, '', location.pathname)")
    run_setup(lab, 3)
    sentinel.settle(lab.page)
    assert sentinel.hits == [("setup", 0, "img")]  # the sentinel sees a payload that runs
    problems: list[str] = []

    def check(what: str, where: Locator) -> None:
        wait_drawn(where)
        missing = canaries_missing(where)
        if missing:
            problems.append(f"{sentinel.phase}, {what}: {len(missing)} canaries missing {missing}")

    # 1. live: streamed into the widget; the record view replaces it when the turn ends
    sentinel.phase = "live"
    root = start_chat(lab, 3)
    root.locator(".jt-prompt-approval").get_by_role("button", name="Approve", exact=True).click()
    root.locator(".jt-prompt-inquiry").get_by_role("button", name="ok", exact=True).click()
    lab.wait_cell_idle(3, timeout=60)
    wait_turn_end(root)
    expect(root.locator(".jt-tool")).to_have_count(2 + len(PAYLOADS))
    streamed = int(lab.page.evaluate("() => window.__jupyter_turns_stats.deltas"))
    assert streamed >= 20, f"the payloads arrived in {streamed} draft parts, not streamed"
    open_folds_and_click_links(lab, sentinel, lab.cell_output(3))
    sentinel.settle(lab.page)
    check("record view", lab.cell_output(3).locator(RECORD))
    lab.save()

    # 2. saved record, new kernel: the saved transcript, %chat history, the widget redrawn
    sentinel.phase = "reopened with a kernel"
    reopen(lab, "hostile.ipynb", kernel=True)
    run_setup(lab, 1)
    expect(lab.run_cell(4)).to_contain_text("Restored thread 'main'")
    lab.run_cell(5)
    lab.run_cell(6)
    redraw = wait_widget(lab, 6)
    expect(redraw.locator(".jt-tool")).to_have_count(2 + len(PAYLOADS))
    for index in (3, 5, 6):
        open_folds_and_click_links(lab, sentinel, lab.cell_output(index))
    sentinel.settle(lab.page)
    check("saved record", lab.cell_output(3).locator(RECORD))
    check("%chat history", lab.cell_output(5).locator(RENDERED))
    check("widget redrawn from the file", redraw)
    lab.save()

    # 3. no kernel: what a reader of the file sees
    sentinel.phase = "reopened without a kernel"
    reopen(lab, "hostile.ipynb", kernel=False)
    for index in (3, 5):
        open_folds_and_click_links(lab, sentinel, lab.cell_output(index))
    sentinel.settle(lab.page)
    check("saved record", lab.cell_output(3).locator(RECORD))
    check("%chat history", lab.cell_output(5).locator(RENDERED))

    # 4. the same file from someone else: not signed by this user's Jupyter, so untrusted; the
    # record renderer is registered as safe and draws it all the same
    sentinel.phase = "untrusted copy"
    copy = nbformat.read(lab.path("hostile.ipynb"), as_version=4)
    copy.metadata["shared_by"] = "someone else"  # another file: this user never signed it
    nbformat.write(copy, lab.path("hostile-copy.ipynb"))
    assert not nbformat.sign.NotebookNotary().check_signature(copy)
    reopen(lab, "hostile-copy.ipynb", kernel=False)
    for index in (3, 5):
        open_folds_and_click_links(lab, sentinel, lab.cell_output(index))
    sentinel.settle(lab.page)
    check("saved record", lab.cell_output(3).locator(RECORD))
    check("%chat history", lab.cell_output(5).locator(RENDERED))

    hits = sentinel.real_hits()
    figures = {
        "payloads": len(PAYLOADS),
        "places": list(PLACES.values()),
        "placements": len(PAYLOADS) * len(PLACES),
        "renderings": RENDERINGS,
        "draft_parts_streamed_live": streamed,
        "links_clicked": sentinel.links,
        "popups": len(sentinel.popups),
        "hits": [
            {
                "phase": phase,
                "rendered in": where,
                "place": PLACES[pid // 100],
                "payload": PAYLOADS[pid % 100 - 1],
            }
            for phase, pid, where in hits
        ],
        "problems": problems,
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "hostile.json").write_text(json.dumps(figures, indent=1))
    assert problems == []
    where = Counter(f"{phase}: {rendered}" for phase, _, rendered in hits)
    ran = sorted({PAYLOADS[pid % 100 - 1] for _, pid, _ in hits})
    assert not hits, (
        f"{len(hits)} payload executions (all in test-artifacts/browser/hostile.json) in "
        f"{json.dumps(where, indent=1)}\nof these payloads:\n" + "\n".join(ran)
    )
