"""Check the lab extension and the widget in a real JupyterLab with headless Chromium.

Run with a Python that has playwright and nbformat; `--env` names the environment where
jupyter_turns (the wheel) and jupyterlab are installed (default: this Python's), e.g.:
    .venv/bin/python js/dev/check_lab.py --env /tmp/fresh-venv [--dark]

1. `jupyter labextension list` shows jupyter_turns enabled.
2. A cell opens a comm to `jupyter_turns.metadata` and sets its own cell metadata (cell id from
   IPython's pre_run_cell hook) and the notebook metadata; the frontend saves (Ctrl+S) and the
   .ipynb on disk has both; an unknown cell id is answered {ok: false}.
3. A throwaway anywidget loading static/widget.js renders a conversation; clicks, Enter and
   Esc arrive in the kernel as custom messages; streamed deltas render.

Every step waits for what a person would see (a cell's new prompt and output, a label the kernel
updates when a message arrives, the tab's unsaved-changes mark), never for a fixed time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import IO

import nbformat
from playwright.sync_api import Page, expect, sync_playwright

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
FAILURES: list[str] = []

SETUP = """\
import importlib.util, pathlib
from comm import create_comm
cell_ids = []
get_ipython().events.register("pre_run_cell", lambda info: cell_ids.append(info.cell_id))
ESM = pathlib.Path(importlib.util.find_spec("jupyter_turns").origin).parent / "static" / "widget.js"
print("setup done", ESM.exists())
"""

WRITE_METADATA = """\
import asyncio
replies = []
all_replied = asyncio.Event()
loop = asyncio.get_running_loop()

def on_reply(m):  # may run on another thread than the loop's
    replies.append(m["content"]["data"])
    if len(replies) == 3:
        loop.call_soon_threadsafe(all_replied.set)
c = create_comm(target_name="jupyter_turns.metadata")
c.on_msg(on_reply)
c.send({"cell_id": cell_ids[-1], "key": "jupyter_turns", "value": {"hello": 1, "cell": cell_ids[-1]}})
c.send({"cell_id": None, "scope": "notebook", "key": "jupyter_turns", "value": {"thread": "main"}})
c.send({"cell_id": "no-such-cell", "key": "jupyter_turns", "value": 1})
print("sent from", cell_ids[-1])
"""

# An awaiting cell receives comm messages while it runs (ipykernel >= 7.4): wait for the replies.
SHOW_REPLIES = "await asyncio.wait_for(all_replied.wait(), 30)\nprint('REPLIES', __import__('json').dumps(replies))"

WIDGET = """\
import asyncio, json
import anywidget, ipywidgets, traitlets
class W(anywidget.AnyWidget):
    _esm = ESM
    events = traitlets.List().tag(sync=True)
    tools = traitlets.Dict().tag(sync=True)
    prompts = traitlets.List().tag(sync=True)
    status = traitlets.Dict().tag(sync=True)
    usage = traitlets.Dict().tag(sync=True)
    settings = traitlets.Dict().tag(sync=True)
got = []
seen = ipywidgets.Label("GOT []")  # what the kernel received, shown in the page
loop = asyncio.get_running_loop()
def on_msg(_w, content, _b):  # comm handlers may run on a subshell thread
    got.append(content)
    loop.call_soon_threadsafe(lambda: setattr(seen, "value", "GOT " + json.dumps(got)))
w = W(
    events=[
        {"kind": "chat_request", "id": "e1", "content": "Plot **data.csv**"},
        {"kind": "reasoning", "id": "e2", "content": "I should run some code.", "metadata": {}},
        {"kind": "message", "id": "e3", "content": "Running `df.plot()` — see below.", "metadata": {}},
        {"kind": "tool_call_request", "id": "e4", "call_id": "c1", "name": "run_python", "arguments": {"code": "df.plot()"}},
    ],
    tools={"c1": {"status": "waiting", "started_at": None, "ended_at": None, "progress": []}},
    prompts=[{"id": "p1", "type": "approval", "call_id": "c1", "name": "run_python", "arguments": {"code": "df.plot()"},
              "schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
              "edit_first": False, "error": None}],
    status={"state": "executing", "retry": None},
    usage={"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.004},
    settings={"reasoning": "full", "thread": "main", "model": "claude-test"},
)
w.on_msg(on_msg)
display(w, seen)
"""

SHOW_GOT = "print('GOT', __import__('json').dumps(got))"

STREAM = """\
text = "".join(f"## Part {i}\\n\\nSome *streamed* text with `code` number {i}.\\n\\n" for i in range(200))
w.prompts = []
w.status = {"state": "streaming", "retry": None}
for k in range(0, len(text), 40):
    w.send({"type": "delta", "parts": [[0, "message", text[k:k + 40]]]})
print("streamed", len(text), "in", len(range(0, len(text), 40)), "deltas")
"""


def _has(message: dict, fields: dict) -> bool:
    """The message carries these fields (it may carry more: who clicked, since issue 32)."""
    return all(message.get(k) == v for k, v in fields.items())


def check(ok: bool, what: str, detail: object = "") -> None:
    print(("PASS " if ok else "FAIL ") + what + (f"  [{detail}]" if detail != "" else ""))
    if not ok:
        FAILURES.append(what)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Notes when the cell's prompt shows [*] (execution started) after this is installed.
_WATCH_PROMPT = """
(index) => {
  const prompt = document.querySelectorAll(".jp-Notebook .jp-Cell")[index].querySelector(".jp-InputArea-prompt");
  const run = (window.__jtRun = { started: prompt.textContent.includes("*") });
  const observer = new MutationObserver(() => {
    if (prompt.textContent.includes("*")) { run.started = true; observer.disconnect(); }
  });
  observer.observe(prompt, { childList: true, characterData: true, subtree: true });
}
"""
# Records every kernel status the status bar shows from now on ("Python 3 (ipykernel) | Idle").
_WATCH_STATUS = """
() => {
  const bar = document.querySelector("#jp-main-statusbar");
  const seen = (window.__jtStatuses = []);
  const note = () => {
    const status = bar.innerText.match(/\\| (\\w+)/)?.[1];
    if (status && status !== seen[seen.length - 1]) seen.push(status);
  };
  note();
  new MutationObserver(note).observe(bar, { subtree: true, childList: true, characterData: true });
}
"""
_RAN = """
([index, expected]) => {
  const cell = document.querySelectorAll(".jp-Notebook .jp-Cell")[index];
  const prompt = cell.querySelector(".jp-InputArea-prompt").textContent.trim();
  if (!window.__jtRun.started || !/^\\[\\d+\\]:$/.test(prompt)) return false;
  return expected === null || (cell.querySelector(".jp-OutputArea")?.innerText ?? "").includes(expected);
}
"""


def run_cell(page: Page, index: int, expect_text: str | None = None, timeout: float = 60) -> str:
    """Run a cell as a user does (select it, Ctrl+Enter); return its output once it ran again
    (its prompt went to [*] and then to a number) and shows `expect_text`."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    page.evaluate(_WATCH_PROMPT, index)
    cell.locator(".jp-InputArea-prompt").click()  # command mode on this cell
    page.keyboard.press("Control+Enter")
    page.wait_for_function(_RAN, arg=[index, expect_text], timeout=timeout * 1000, polling=50)
    return cell.locator(".jp-OutputArea").inner_text()


def start_server(bindir: Path, root: Path, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    """`jupyter lab` on `port`, returned once it says it is running (its log goes to server.log)."""
    server = subprocess.Popen(
        [bindir / "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1", "--allow-root"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
    )
    assert server.stdout is not None
    log = open(root / "server.log", "w")
    for line in server.stdout:  # blocks until the server writes; ends if it exits
        log.write(line)
        if f"http://127.0.0.1:{port}/lab" in line:
            break
    else:
        raise RuntimeError(f"jupyter lab exited with {server.wait()}; see {root / 'server.log'}")
    threading.Thread(target=_drain, args=(server.stdout, log), daemon=True).start()
    return server


def _drain(stream: IO[str], log: IO[str]) -> None:
    for line in stream:
        log.write(line)
    log.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dark", action="store_true")
    parser.add_argument("--env", type=Path, default=Path(sys.prefix))
    args = parser.parse_args()
    bindir = args.env / "bin"

    listing = subprocess.run([bindir / "jupyter", "labextension", "list"], capture_output=True, text=True)
    text = listing.stdout + listing.stderr
    line = next((ln for ln in text.splitlines() if "jupyter_turns" in ln), "")
    check("enabled" in line and "OK" in line, "jupyter labextension list shows jupyter_turns enabled", line.strip())

    root = Path(tempfile.mkdtemp(prefix="jt-lab-"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (SETUP, WRITE_METADATA, SHOW_REPLIES, WIDGET, SHOW_GOT, STREAM)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "t.ipynb")
    settings_dir = root / "settings"
    theme = "JupyterLab Dark" if args.dark else "JupyterLab Light"
    (settings_dir / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings_dir / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings").write_text(json.dumps({"theme": theme}))

    port = free_port()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings_dir), "JUPYTER_RUNTIME_DIR": str(root / "runtime")}
    server = start_server(bindir, root, port, env)
    base = f"http://127.0.0.1:{port}"
    expect.set_options(timeout=30_000)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/lab/tree/t.ipynb")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            # The kernel as the status bar shows it ("No Kernel | Initializing" comes first, and the
            # toolbar's execution indicator reads idle already then).
            expect(page.locator("#jp-main-statusbar")).to_contain_text(re.compile(r"\(ipykernel\) \| Idle"), timeout=60_000)

            out = run_cell(page, 0, "setup done")
            check("setup done True" in out, "kernel finds static/widget.js", out.strip())
            out = run_cell(page, 1, "sent from")
            cell_id = out.strip().split()[-1]
            out = run_cell(page, 2, "REPLIES")
            replies = json.loads(out.split("REPLIES", 1)[1])
            check(replies[:2] == [{"ok": True}, {"ok": True}], "metadata writes acknowledged {ok: true}", replies)
            check(len(replies) == 3 and replies[2]["ok"] is False and "no-such-cell" in replies[2]["reason"], "unknown cell answered {ok: false, reason}", replies[2:] )

            # --- the widget
            run_cell(page, 3)
            widget = page.locator(".jt-root").first
            expect(widget.locator(".jt-prompt-approval")).to_be_visible()
            check(widget.locator(".jt-tool").count() == 1 and widget.locator(".jt-request").count() == 1, "widget renders in JupyterLab")
            widget.screenshot(path=str(ARTIFACTS / f"lab-widget{'-dark' if args.dark else ''}.png"))
            seen = page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".widget-label")
            # Enter on the focused prompt approves (and does not put the notebook in edit mode)
            widget.locator(".jt-prompt").focus()
            page.keyboard.press("Enter")
            expect(widget.locator(".jt-prompt-approval").get_by_role("button", name="Approve")).to_be_disabled()  # sent
            in_edit = page.evaluate("() => document.querySelector('.jp-Notebook').classList.contains('jp-mod-editMode')")
            check(not in_edit, "Enter in the widget does not switch the notebook to edit mode")
            expect(seen).to_contain_text('"action": "approved"')
            got = json.loads(seen.inner_text().split("GOT", 1)[1])
            check({"type": "ready"} in got, "ready reached the kernel", got)
            check(any(_has(m, {"type": "approval", "prompt_id": "p1", "action": "approved"}) for m in got), "Enter-approve reached the kernel", got)
            out = run_cell(page, 4, "GOT")
            check(json.loads(out.split("GOT", 1)[1]) == got, "the kernel's list matches what it showed", out.strip())

            # streaming + Esc
            before = int(widget.get_attribute("data-blocks-parsed") or 0)
            out = run_cell(page, 5, "streamed")
            deltas = int(re.search(r"in (\d+) deltas", out).group(1))  # type: ignore[union-attr]
            expect(widget).to_have_attribute("data-deltas", str(deltas))  # every delta drawn
            stats = widget.evaluate("(r) => Object.fromEntries([...r.attributes].filter(a => a.name.startsWith('data-')).map(a => [a.name, a.value]))")
            check(widget.locator(".jt-draft h2").count() == 200, "kernel-sent deltas render in the draft", stats)
            check(int(stats["data-blocks-parsed"]) - before == 399, "each finished block parsed once in lab (400 blocks, tail open)", (before, stats))
            widget.locator(".jt-md").first.click()
            page.keyboard.press("Escape")
            expect(seen).to_contain_text('"type": "interrupt_request"')
            got = json.loads(seen.inner_text().split("GOT", 1)[1])
            check(any(_has(m, {"type": "interrupt_request"}) for m in got), "Esc sends the interrupt request", got[-3:])

            # --- save from the frontend and read the file
            tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current")
            expect(tab).to_have_class(re.compile(r"\bjp-mod-dirty\b"))  # the metadata writes are unsaved
            page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-InputArea-prompt").click()
            page.keyboard.press("Control+s")
            expect(tab).not_to_have_class(re.compile(r"\bjp-mod-dirty\b"))  # saved
            saved = nbformat.read(root / "t.ipynb", as_version=4)
            cell = next((c for c in saved.cells if c.get("id") == cell_id), None)
            check(cell is not None and cell.metadata.get("jupyter_turns") == {"hello": 1, "cell": cell_id}, "cell metadata saved by the frontend", cell.metadata if cell else None)
            check(saved.metadata.get("jupyter_turns") == {"thread": "main"}, "notebook metadata saved by the frontend", dict(saved.metadata))

            # --- kernel restart (server side): the comm target must still be registered
            kernel_id = json.load(urllib.request.urlopen(f"{base}/api/sessions"))[0]["kernel"]["id"]
            xsrf = next(c["value"] for c in page.context.cookies() if c["name"] == "_xsrf")
            # Restarted behind the page's back: the status bar shows it (Idle -> Starting); a cell
            # run before the page saw it could be dropped with the old kernel's pending requests.
            page.evaluate(_WATCH_STATUS)
            resp = page.request.post(f"{base}/api/kernels/{kernel_id}/restart", headers={"X-XSRFToken": xsrf})
            check(resp.ok, "kernel restarted", resp.status)
            page.wait_for_function("() => window.__jtStatuses.some((status) => status !== 'Idle')")
            run_cell(page, 0, "setup done")
            run_cell(page, 1, "sent from")
            out = run_cell(page, 2, "REPLIES")
            replies = json.loads(out.split("REPLIES", 1)[-1])
            check(replies[:2] == [{"ok": True}, {"ok": True}], "metadata writer works after a kernel restart", replies)
            check(errors == [], "no page errors", errors[:3])
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"{len(FAILURES)} failed" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
