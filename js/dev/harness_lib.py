"""The harness checks' shared pieces: the page, PASS/FAIL bookkeeping, waits on the page.

Every check that follows an action (a click, a key, a trait change, a custom message) waits
for what a person would see — through Playwright's auto-waiting `expect(...)` assertions
(`verify`), or a `wait_for_function` on the state the action produces (`sent_after`,
`settle`) — never for a fixed time.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]
# How long a check waits for the page to show what it expects: generous, because a loaded
# two-core machine can be slow; a check that holds returns at once.
TIMEOUT_MS = 15_000
expect.set_options(timeout=TIMEOUT_MS)
FAILURES: list[str] = []


def check(ok: bool, what: str, detail: object = "") -> None:
    print(("PASS " if ok else "FAIL ") + what + (f"  [{detail}]" if detail != "" else ""))
    if not ok:
        FAILURES.append(what)


def verify(what: str, assertion: Callable[[], object]) -> None:
    """PASS/FAIL of Playwright assertions, each of which waits until it holds (or times out).
    Several go in one lambda as a tuple: `lambda: (expect(a).to_..., expect(b).to_...)`."""
    try:
        assertion()
    except AssertionError as exc:
        lines = [line for line in str(exc).splitlines() if line.strip()]
        check(False, what, " / ".join(lines[:3]))
    else:
        check(True, what)


def serve() -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(ROOT))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def mount(page: Page, state: dict[str, object]) -> int:
    """Render a view of a fresh fake model (synchronously, in the page); its index."""
    return int(page.evaluate("(s) => harness.mount(s)", state))


def root(i: int) -> str:
    """The selector of view `i`'s `.jt-root`."""
    return f".mount:nth-child({i + 1}) .jt-root"


def attrs(page: Page, i: int) -> dict[str, int]:
    """View `i`'s counters (`data-*` on its root, see js/README.md)."""
    return page.evaluate(
        """(i) => { const r = harness.view(i).root; const out = {};
             for (const a of r.getAttributeNames()) if (a.startsWith('data-') && a !== 'data-state') out[a.slice(5)] = Number(r.getAttribute(a));
             return out; }""",
        i,
    )


def sent(page: Page, i: int) -> list[dict[str, Any]]:
    """Every message view `i` sent to the kernel so far (`model.send`)."""
    return page.evaluate("(i) => harness.view(i).model.sent", i)


_SENT_COUNT = """([i, n]) => harness.view(i).model.sent.filter((m) => m.type !== "ready").length >= n"""


def sent_after(page: Page, i: int, count: int) -> list[dict[str, Any]]:
    """View `i`'s messages other than `ready`, once `count` of them were sent (what was sent
    so far if that does not happen in time: the caller's comparison then fails)."""
    try:
        page.wait_for_function(_SENT_COUNT, arg=[i, count], timeout=TIMEOUT_MS)
    except PlaywrightTimeoutError:
        pass
    return [_without_who(m) for m in sent(page, i) if m["type"] != "ready"]


def _without_who(message: dict[str, Any]) -> dict[str, Any]:
    """A page answer names who clicked; with no JupyterLab user here it is "you" (checked), and
    the rest of the message is compared as before."""
    who = message.get("who")
    if who is None:
        return message
    assert who == {"name": "you", "username": ""}, f"unexpected who: {who!r}"
    return {k: v for k, v in message.items() if k != "who"}


# A control the check itself adds: an image that fails to load and a <details> that opens. Their
# events are queued after those of everything rendered before them.
_CONTROL = """
() => new Promise((resolve) => {
  let left = 2;
  const done = () => { left -= 1; if (left === 0) resolve(true); };
  const img = document.createElement("img");
  img.onerror = () => { img.remove(); done(); };
  img.src = "/control-" + Math.random() + ".png";
  const details = document.createElement("details");
  details.addEventListener("toggle", () => { details.remove(); done(); });
  document.body.append(img, details);
  details.open = true;
})
"""
_IMAGES_SETTLED = "() => [...document.images].every((img) => img.complete)"


def settle(page: Page) -> None:
    """Wait until the page's queued load/error/toggle handlers have run: a control image failed
    and a control <details> toggled, and every image finished loading or failing."""
    page.evaluate(_CONTROL)
    page.wait_for_function(_IMAGES_SETTLED, timeout=TIMEOUT_MS)


def conversation() -> dict[str, object]:
    """A saved conversation with one of everything."""
    t = "2025-01-01T00:00:00Z"
    events = [
        {"kind": "chat_request", "id": "e1", "timestamp": t, "content": "What is in **data.csv**?"},
        {"kind": "reasoning", "id": "e2", "timestamp": t, "content": "The user wants a summary. I should *read* the file first.", "metadata": {"signature": "sig"}},
        {"kind": "message", "id": "e3", "timestamp": t, "content": "Let me look at the file.", "metadata": {}},
        {"kind": "tool_call_request", "id": "e4", "timestamp": t, "call_id": "c1", "name": "read_csv", "arguments": {"path": "data.csv", "rows": 5}, "metadata": {}},
        {"kind": "inquiry_request", "id": "e5", "timestamp": t, "inquiry_id": "q1", "call_id": "c1", "question": "Include the header?", "choices": ["yes", "no"]},
        {"kind": "inquiry_response", "id": "e6", "timestamp": t, "inquiry_id": "q1", "call_id": "c1", "answer": "yes", "by": "user"},
        {"kind": "tool_call_response", "id": "e7", "timestamp": t, "call_id": "c1", "content": "a,b\n1,2\n3,4", "is_error": False, "status": "done", "decisions": [{"action": "approved", "by": "user", "detail": None}, {"action": "delivered", "by": "policy", "detail": None}], "elapsed": 0.42},
        {"kind": "block", "id": "e8", "timestamp": t, "metadata": {"raw_block": {"type": "redacted_thinking", "data": "EmwK"}}},
        {"kind": "message", "id": "e9", "timestamp": t, "content": "The file has two columns:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nNext I will plot it.", "metadata": {}},
        {"kind": "tool_call_request", "id": "e10", "timestamp": t, "call_id": "c2", "name": "run_python", "arguments": {"code": "df.plot()"}, "metadata": {}},
        {"kind": "notice", "id": "e11", "timestamp": t, "level": "warning", "text": "run_python asks before running"},
    ]
    return {
        "events": events,
        "tools": {"c2": {"status": "waiting", "started_at": None, "ended_at": None, "progress": []}},
        "prompts": [{"id": "p1", "type": "approval", "call_id": "c2", "name": "run_python", "arguments": {"code": "df.plot()"}, "schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}, "edit_first": False, "error": None}],
        "status": {"state": "executing", "retry": None},
        "usage": {"input_tokens": 1234, "output_tokens": 567, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 0, "cost_usd": 0.0123},
        "settings": {"reasoning": "full", "thread": "main", "model": "claude-sonnet-4-5"},
    }
