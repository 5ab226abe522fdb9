"""Drive a real JupyterLab server in headless Chromium: the helpers behind the browser tests.

The fixtures in `tests/browser/conftest.py` give each test a `Lab` — a fresh browser context on
a session-wide JupyterLab server whose notebooks live in the test's own folder:

    import pytest
    from playwright.sync_api import expect
    from tests.browser.lab import Lab

    pytestmark = pytest.mark.browser

    def test_turn_survives_a_reload(lab: Lab) -> None:
        lab.write_notebook("t.ipynb", ["%load_ext jupyter_turns", "%%chat\\nhi"])  # code
        lab.open("t.ipynb")                 # page loaded, kernel idle
        lab.run_cell(0)                     # returns once the cell's prompt is no longer [*]
        expect(lab.prompt(0)).to_have_text("[1]:")
        lab.run_cell(1, wait=False)         # a busy %%chat cell: don't wait
        expect(lab.cell_output(1).locator(".jt-root")).to_be_visible()
        lab.wait_cell_idle(1, timeout=20)
        lab.save()                          # returns once the .ipynb on disk changed
        saved = lab.read_notebook("t.ipynb")
        lab.close_and_reopen("t.ipynb")     # fresh page, saved file, no kernel
        lab.screenshot("reopened.png")      # -> test-artifacts/browser/reopened.png

Everything waits on observable state (a command's promise, a cell's prompt, the kernel status,
the file on disk) with a timeout in seconds, never on a fixed sleep; a JupyterLab dialog that
blocks a command fails the wait at once with the dialog's text. Cells are addressed by their
index in the notebook (windowing is off, so every cell is in the DOM). JupyterLab is driven
through its own commands and objects (`window.jupyterapp`, exposed by `expose_app_in_browser`)
rather than clicks on pixels; `lab.page` is the Playwright page for anything else, and
`lab.server` (see server.py) the JupyterLab process, its REST API and its log.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.parse
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from nbformat.sign import NotebookNotary
from playwright.sync_api import Browser, Locator, Page, expect
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .server import ARTIFACTS, VIEWPORT, LabError, LabServer, safe_name

__all__ = ["KNOWN_PAGE_ERRORS", "VIEWPORT", "Lab", "browser_context"]

# Installed on every page before JupyterLab's own scripts: a registry of pending JS calls, so
# that Python can start a long-running command and wait for it with a timeout (page.evaluate
# itself has none).
_INIT_SCRIPT = """
window.__jtCalls = {};
window.__jtTrack = (token, promise) => {
  const rec = (window.__jtCalls[token] = { done: false, value: null, error: null });
  Promise.resolve(promise).then(
    (value) => { rec.done = true; rec.value = value === undefined ? null : value; },
    (err) => { rec.done = true; rec.error = String((err && err.stack) || err); },
  );
};
"""

# Page errors that JupyterLab 4.6.6 itself raises in situations the tests create on purpose.
KNOWN_PAGE_ERRORS = (
    # @jupyter-widgets/jupyterlab-manager 5.0.16 reads `session.kernel` of a notebook opened
    # without a kernel: it then sets up no widget manager for that notebook.
    "Cannot read properties of null (reading 'kernel')",
    # Notebook 7.6.5's own settings code, on every page it opens under the test server's user
    # settings (LAB_SETTINGS name JupyterLab plugins Notebook 7 does not load); seen opening a
    # plain notebook with no chat output at all.
    "Cannot read properties of undefined (reading 'schema')",
    # anywidget's runtime rejects a model whose setup takes over a fixed 2 s
    # (AbortSignal.timeout(2000) in its Runtime): on a loaded two-core machine loading the
    # widget's code can; the view still draws, and every test waits on what it draws.
    "[anywidget] Failed to initialize model",
)

_ERRORS = """
(index) => {
  const cell = window.__jt.panel.content.widgets[index];
  const outputs = cell?.model?.outputs?.toJSON?.() ?? [];
  return outputs.filter((o) => o.output_type === "error").map((o) => `${o.ename}: ${o.evalue}`);
}
"""

_APP_READY = "() => !!(window.jupyterapp && window.__jtTrack)"

_SCRIPTED: weakref.WeakSet[Page] = weakref.WeakSet()  # pages that run _INIT_SCRIPT

# The notebook opened by Lab.open(); cells run by Lab.run_cell()/run_all() get a record here.
_OPEN = """
({ token, path, kernel }) => window.__jtTrack(token, (async () => {
  const app = window.jupyterapp;
  await app.restored;
  const args = { path, factory: "Notebook" };
  if (!kernel) args.kernelPreference = { shouldStart: false, shouldReuse: false };
  const panel = await app.commands.execute("docmanager:open", args);
  window.__jt = { panel, runs: {} };
  await panel.context.ready;
  await panel.sessionContext.ready;
  await panel.revealed;
  app.shell.collapseLeft();  // more room for the notebook in screenshots
  app.shell.activateById(panel.id);
  return panel.id;
})())
"""

# A test's page left for the next one: the documents it opened go without saving (a dirty one
# would ask); the page stays a loaded JupyterLab. False when it cannot be left so (a dialog is
# open, or this is no JupyterLab page).
_CLOSE_ALL = """
() => {
  const app = window.jupyterapp;
  if (!app || !app.shell || !app.shell.widgets || document.querySelector(".jp-Dialog")) {
    return false;
  }
  for (const widget of Array.from(app.shell.widgets("main"))) {
    if (widget.context && widget.context.model) widget.context.model.dirty = false;
    widget.dispose();
  }
  window.__jt = undefined;
  return Array.from(app.shell.widgets("main")).length === 0;
}
"""

# Notebook 7's page holds one notebook panel: the Lab helpers drive it like JupyterLab's.
_NOTEBOOK7 = """
({ token }) => window.__jtTrack(token, (async () => {
  const app = window.jupyterapp;
  await app.restored;
  const panel = app.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  window.__jt = { panel, runs: {} };
  return panel.id;
})())
"""

_KERNEL_IDLE = """
() => {
  const kernel = window.__jt.panel.sessionContext.session?.kernel;
  const idle = !!kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
  return idle || !!document.querySelector(".jp-Dialog");
}
"""

_KERNEL_CONNECTED = """
() => window.__jt.panel.sessionContext.session?.kernel?.connectionStatus === "connected"
"""

_KERNEL_STATUS = """
() => {
  const kernel = window.__jt.panel.sessionContext.session?.kernel;
  return kernel ? kernel.status : null;
}
"""

_RUN = """
({ index, command }) => {
  const app = window.jupyterapp;
  const { panel, runs } = window.__jt;
  const notebook = panel.content;
  const targets = index === null ? notebook.widgets.map((_, i) => i) : [index];
  // One shared record per run; each target cell notes when it starts running.
  const run = { done: false, ok: null, error: null };
  const watched = [];
  for (const i of targets) {
    const cell = notebook.widgets[i];
    const rec = { run, started: cell.model.executionState === "running" };
    const onChange = (_, change) => {
      if (change.name === "executionState" && change.newValue === "running") rec.started = true;
    };
    cell.model.stateChanged.connect(onChange);
    watched.push([cell.model, onChange]);
    runs[i] = rec;
  }
  const finish = () => {
    for (const [model, onChange] of watched) model.stateChanged.disconnect(onChange);
  };
  app.shell.activateById(panel.id);
  if (index !== null) {
    notebook.activeCellIndex = index;
    notebook.deselectAll();
  }
  app.commands.execute(command).then(
    (ok) => { run.done = true; run.ok = ok; finish(); },
    (err) => { run.done = true; run.error = String(err); finish(); },
  );
}
"""

# A cell is idle when its prompt does not read [*], the run Lab started (if any) has reached
# the cell (it ran and stopped, or the whole command finished: a Run All stopped by an error),
# and every output the kernel sent has its place in the output area.
_CELL_IDLE = """
(index) => {
  const { panel, runs } = window.__jt;
  const cell = panel.content.widgets[index];
  if (!cell) return false;
  const prompt = cell.node.querySelector(".jp-InputArea-prompt");
  if (prompt && prompt.textContent.includes("*")) return false;
  if (cell.outputArea && cell.outputArea.widgets.length !== cell.model.outputs.length) return false;
  const rec = runs[index];
  return !rec || rec.run.done || (rec.started && cell.model.executionState !== "running");
}
"""

_CELL_STATE = """
(index) => {
  const { panel, runs } = window.__jt;
  const cell = panel.content.widgets[index];
  if (!cell) return { count: panel.content.widgets.length };
  const prompt = cell.node.querySelector(".jp-InputArea-prompt");
  return {
    prompt: prompt ? prompt.textContent : null,
    state: cell.model.executionState ?? null,
    run: runs[index] ? { started: runs[index].started, ...runs[index].run } : null,
  };
}
"""

_COMMAND = """
({ token, command, args }) => window.__jtTrack(token, (async () => {
  const app = window.jupyterapp;
  app.shell.activateById(window.__jt.panel.id);
  const value = await app.commands.execute(command, args);
  return value === undefined || typeof value === "object" ? null : value;
})())
"""

_SAVE = """
({ token }) => window.__jtTrack(token, (async () => {
  const app = window.jupyterapp;
  const { panel } = window.__jt;
  app.shell.activateById(panel.id);
  await app.commands.execute("docmanager:save");
})())
"""

_RESTART = """
({ token }) => window.__jtTrack(token, (async () => {
  await window.__jt.panel.sessionContext.restartKernel();
})())
"""

_DIALOG_TEXT = """
() => [...document.querySelectorAll(".jp-Dialog")].map((d) => d.innerText.trim()).join(" | ")
"""

# A command waiting for the user in a modal dialog never finishes by itself: stop waiting.
_CALL_SETTLED = """
(t) => (window.__jtCalls[t] && window.__jtCalls[t].done) || !!document.querySelector(".jp-Dialog")
"""


class Lab:
    """One test's view of the server: its notebooks folder and a browser page.

    Notebook names are relative to the test's folder. Timeouts are in seconds.
    """

    def __init__(self, server: LabServer, page: Page, folder: str) -> None:
        self.server = server
        self.page = page
        self.folder = safe_name(folder)
        self.dir = server.root / self.folder
        self.dir.mkdir(parents=True, exist_ok=True)
        self.console: list[str] = []
        self.page_errors: list[str] = []
        self.failed_requests: list[str] = []
        self._saved_settings: dict[str, str] = {}
        self._opened = False
        if page not in _SCRIPTED:  # a page a test left for the next one has it already
            page.add_init_script(_INIT_SCRIPT)
            _SCRIPTED.add(page)
        self._listeners: list[tuple[str, Any]] = [
            ("console", lambda msg: self.console.append(f"[{msg.type}] {msg.text}")),
            ("pageerror", lambda err: self.page_errors.append(err.stack or str(err))),
            # Includes any request off 127.0.0.1: no host name resolves in the test browser.
            ("requestfailed", lambda req: self.failed_requests.append(f"{req.url} {req.failure}")),
            # Leaving a page with unsaved changes raises a beforeunload dialog: leave anyway.
            ("dialog", lambda dialog: dialog.accept()),
        ]
        for event, listener in self._listeners:
            page.on(event, listener)

    # --- files -----------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        """The notebook's file on disk."""
        return self.dir / name

    def write_notebook(
        self,
        name: str,
        cells: Sequence[str | NotebookNode],
        *,
        metadata: Mapping[str, Any] | None = None,
        trust: bool = False,
    ) -> Path:
        """Write an nbformat v4 notebook with the python3 kernelspec and return its path.

        A string is a code cell's source; a NotebookNode (nbformat.v4.new_*_cell) is used as
        is, e.g. a code cell with saved outputs. `trust=True` signs the notebook with the
        server's notary, so JupyterLab renders its outputs as trusted (scripts in HTML run).
        """
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells]
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        nb.metadata["language_info"] = {"name": "python"}
        nb.metadata.update(metadata or {})
        nbformat.validate(nb)
        if trust:
            NotebookNotary(data_dir=str(self.server.data_dir)).sign(nb)
        target = self.path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        return target

    def read_notebook(self, name: str) -> NotebookNode:
        """The notebook as saved on disk (nbformat v4)."""
        nb: NotebookNode = nbformat.read(self.path(name), as_version=4)
        return nb

    # --- opening ---------------------------------------------------------------------------

    def open(
        self, name: str, *, kernel: bool = True, workspace: str = "", timeout: float = 60
    ) -> None:
        """Load JupyterLab with an empty workspace and open the notebook.

        With `kernel=True` return once its kernel is connected and idle; with `kernel=False`
        the notebook opens with "No Kernel" (JupyterLab's "Notebook (no kernel)") and this
        returns once its cells are rendered. A second page of the same browser context names
        its own `workspace` (JupyterLab moves a tab whose workspace is in use elsewhere to a
        new one, a navigation that would cut the opening short).
        """
        first, self._opened = not self._opened, True
        if not (first and not workspace and self._left_loaded()):
            where = f"/lab/workspaces/{workspace}" if workspace else "/lab"
            self.page.goto(f"{self.server.url}{where}?reset", wait_until="domcontentloaded")
        self.page.wait_for_function(_APP_READY, timeout=timeout * 1000, polling=50)
        path = f"{self.folder}/{name}"
        self._call(_OPEN, {"path": path, "kernel": kernel}, timeout, f"open {path}")
        if kernel:
            self.wait_kernel_idle(timeout)

    def reload(self, name: str, *, timeout: float = 60) -> None:
        """Load the page again and open the notebook, as a person reloading it does: the
        notebook comes from the file on disk, its kernel keeps running (maybe busy with a
        turn). Returns once the notebook is open and its kernel connected, busy or not."""
        self.page.goto(f"{self.server.url}/lab?reset", wait_until="domcontentloaded")
        self.page.wait_for_function(_APP_READY, timeout=timeout * 1000, polling=50)
        path = f"{self.folder}/{name}"
        self._call(_OPEN, {"path": path, "kernel": True}, timeout, f"open {path}")
        self.page.wait_for_function(_KERNEL_CONNECTED, timeout=timeout * 1000, polling=50)

    def reload_in_notebook7(self, name: str, *, timeout: float = 60) -> None:
        """Load Notebook 7's page of the notebook again (or for the first time, in a second
        tab), as a person reloading it does: the notebook comes from the file or the shared
        document, its kernel keeps running (maybe busy with a turn). Returns once the notebook
        is open and its kernel connected, busy or not."""
        url = f"{self.server.url}/notebooks/{self.folder}/{name}"
        self.page.goto(url, wait_until="domcontentloaded")
        self.page.wait_for_function(_APP_READY, timeout=timeout * 1000, polling=50)
        self._call(_NOTEBOOK7, {}, timeout, "Notebook 7's notebook panel")
        self.page.wait_for_function(_KERNEL_CONNECTED, timeout=timeout * 1000, polling=50)

    def leave(self) -> None:
        """Close the page (as closing the tab does); the notebook's kernel keeps running."""
        self.page.goto("about:blank")

    def close_and_reopen(self, name: str, *, kernel: bool = False, timeout: float = 60) -> None:
        """Leave the page, shut this folder's kernels down and open the saved file again.

        Unsaved changes are discarded (save first). With the default `kernel=False` the
        notebook comes back as a user finds it later: the file's outputs, no kernel.
        """
        self.page.goto("about:blank")
        self.server.shutdown_sessions(under=self.folder + "/")
        self.open(name, kernel=kernel, timeout=timeout)

    def open_in_notebook7(self, name: str, *, timeout: float = 60) -> None:
        """Leave the page, shut this folder's kernels down and open the saved file in Notebook
        7's own page (`/notebooks/...`, served by the same server), as its users do; returns
        once its cells are drawn. The cell locators below work there too."""
        self.page.goto("about:blank")
        self.server.shutdown_sessions(under=self.folder + "/")
        url = f"{self.server.url}/notebooks/{self.folder}/{name}"
        self.page.goto(url, wait_until="domcontentloaded")
        cells = self.page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        expect(cells.first).to_be_visible(timeout=timeout * 1000)
        # the page's notebook panel, for run_cell, prompt, save... as in JupyterLab
        self.page.wait_for_function(_APP_READY, timeout=timeout * 1000, polling=50)
        self._call(_NOTEBOOK7, {}, timeout, "Notebook 7's notebook panel")
        # Notebook 7 starts a kernel for the notebook: let it finish, so that closing this
        # test shuts it down rather than racing its start (a later test would find it)
        self.server.wait_kernel_idle(self.folder + "/", name, timeout)

    # --- cells -----------------------------------------------------------------------------

    def cells(self) -> Locator:
        """All cells of the open notebook, in notebook order."""
        return self.page.locator(".jp-Notebook .jp-WindowedPanel-viewport > .jp-Cell")

    def cell(self, index: int) -> Locator:
        return self.cells().nth(index)

    def cell_output(self, index: int) -> Locator:
        """The output area of cell `index`."""
        return self.cell(index).locator(".jp-OutputArea")

    def run_cell(self, index: int, *, wait: bool = True, timeout: float = 30) -> Locator:
        """Run one cell (command `notebook:run-cell`); by default wait until it is idle.

        Use `wait=False` for a cell that stays busy (a %%chat turn waiting for clicks) and call
        `wait_cell_idle` later. Returns the cell's output locator.
        """
        self.page.evaluate(_RUN, {"index": index, "command": "notebook:run-cell"})
        if wait:
            self.wait_cell_idle(index, timeout)
        return self.cell_output(index)

    def run_all(self, *, wait: bool = True, timeout: float = 60) -> None:
        """Run every cell (command `notebook:run-all-cells`); by default wait for all to end."""
        self.page.evaluate(_RUN, {"index": None, "command": "notebook:run-all-cells"})
        if wait:
            deadline = time.monotonic() + timeout
            for index in range(self.cells().count()):
                self.wait_cell_idle(index, max(deadline - time.monotonic(), 0.1))

    def wait_cell_idle(self, index: int, timeout: float = 30) -> None:
        """Wait until cell `index`'s prompt no longer reads [*] (and Lab's run of it ended)."""
        try:
            self.page.wait_for_function(_CELL_IDLE, arg=index, timeout=timeout * 1000, polling=50)
        except PlaywrightTimeoutError:
            state = self.page.evaluate(_CELL_STATE, index)
            raise LabError(f"cell {index} still busy after {timeout} s: {state}") from None

    def errors(self, index: int) -> list[str]:
        """The error outputs cell `index` holds in the notebook model ("Name: value" each).

        Read from the model, not the page text: a kernel may print harmless warnings on
        stderr.
        """
        found: list[str] = self.page.evaluate(_ERRORS, index)
        return found

    def prompt(self, index: int) -> Locator:
        """The cell's execution prompt, e.g. "[3]:", "[*]:" or "[ ]:": for `expect(...)`."""
        return self.cell(index).locator(".jp-InputArea-prompt")

    # --- kernel ----------------------------------------------------------------------------

    def identity_name(self, timeout: float = 30) -> str:
        """The name JupyterLab gives this page's user (the test server knows no names: a
        made-up "Anonymous ..." one)."""
        script = "() => window.jupyterapp.serviceManager.user.identity?.name ?? null"
        handle = self.page.wait_for_function(script, timeout=timeout * 1000, polling=50)
        name = handle.json_value()
        assert isinstance(name, str) and name, name
        return name

    def user_name(self, timeout: float = 30) -> str:
        """The name this page's clicks are saved under, as the lab extension reports it: the
        user's name, "you" for a made-up anonymous one while nobody else is on an open
        notebook (js/labextension/shared.js clickerIdentity)."""
        self.identity_name(timeout)  # JupyterLab knows its user
        script = """() => {
          const who = window.__jupyter_turns_user?.();
          return who?.name || who?.display_name || who?.username || "you";
        }"""
        name = self.page.evaluate(script)
        assert isinstance(name, str) and name, name
        return name

    def kernel_status(self) -> str | None:
        """The kernel's status as the frontend sees it, None when the notebook has no kernel."""
        status: str | None = self.page.evaluate(_KERNEL_STATUS)
        return status

    def wait_kernel_idle(self, timeout: float = 60) -> None:
        """Wait until the notebook's kernel is connected and idle (fails fast on a dialog)."""
        try:
            self.page.wait_for_function(_KERNEL_IDLE, timeout=timeout * 1000, polling=50)
        except PlaywrightTimeoutError:
            raise LabError(
                f"kernel not idle after {timeout} s (status {self.kernel_status()!r})"
            ) from None
        dialogs = self.page.evaluate(_DIALOG_TEXT)
        if dialogs:
            raise LabError(f"waiting for an idle kernel, JupyterLab shows a dialog: {dialogs!r}")

    def restart_kernel(self, timeout: float = 60) -> None:
        """Restart the kernel without the confirmation dialog; return once it is idle again."""
        self._call(_RESTART, {}, timeout, "kernel restart")
        self.wait_kernel_idle(timeout)

    def interrupt_kernel(self, *, via: str = "command") -> None:
        """Interrupt the kernel: `via="command"` runs `kernelmenu:interrupt` (what the Kernel
        menu and I,I do); `via="toolbar"` clicks the notebook toolbar's interrupt button."""
        if via == "toolbar":
            self.page.locator(
                '.jp-NotebookPanel-toolbar [data-jp-item-name="interrupt"] button'
            ).click()
        elif via == "command":
            self.command("kernelmenu:interrupt")
        else:
            raise ValueError(f"via must be 'command' or 'toolbar', not {via!r}")

    # --- document --------------------------------------------------------------------------

    def save(self, timeout: float = 30) -> None:
        """Save through `docmanager:save` (what Ctrl+S runs); return once the file changed.

        Works while a cell is busy too: what the frontend holds at that moment is written.
        """
        target = self._open_path()
        before = _file_state(target)
        self._call(_SAVE, {}, timeout, "save")
        # The command resolves once the server answered the PUT, i.e. after the file was written.
        if _file_state(target) == before:
            raise LabError(f"{target} did not change on disk after saving")

    def command(
        self, command: str, args: Mapping[str, Any] | None = None, timeout: float = 30
    ) -> Any:
        """Execute a JupyterLab command on the open notebook and wait for its promise."""
        return self._call(
            _COMMAND, {"command": command, "args": dict(args or {})}, timeout, command
        )

    def set_settings(self, plugin: str, values: Mapping[str, Any]) -> None:
        """Change a JupyterLab plugin's user settings for this test (restored afterwards).

        Settings are read when the page loads: call this before `open()`, e.g.
        `lab.set_settings("@jupyter-widgets/jupyterlab-manager:plugin", {"saveState": True})`.
        """
        path = "/lab/api/settings/" + urllib.parse.quote(plugin)
        current = self.server.api("GET", path)
        if plugin not in self._saved_settings:
            self._saved_settings[plugin] = current.get("raw") or "{}"
        merged = {**(current.get("settings") or {}), **values}
        self.server.api("PUT", path, {"raw": json.dumps(merged)})

    # --- evidence --------------------------------------------------------------------------

    def screenshot(self, name: str | Path) -> Path:
        """Screenshot the page; a bare name goes to test-artifacts/browser/."""
        target = Path(name)
        if not target.is_absolute():
            target = ARTIFACTS / target
        target.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(target))
        return target

    def close(self, *, keep_loaded: bool = False) -> None:
        """Close the test's documents (an open notebook would start its kernel again), shut
        down its kernels and restore the settings it changed. With `keep_loaded`, a JupyterLab
        page of the default workspace whose settings the test left alone stays loaded for the
        next test's first `open` (loading JupyterLab is most of a short test's time); any other
        page goes blank."""
        for event, listener in self._listeners:
            self.page.remove_listener(event, listener)
        reusable = False
        if keep_loaded and not self._saved_settings and self._in_lab():
            with contextlib.suppress(PlaywrightError):
                reusable = bool(self.page.evaluate(_CLOSE_ALL))
        if not reusable:
            with contextlib.suppress(PlaywrightError):
                self.page.goto("about:blank")
        with contextlib.suppress(OSError, urllib.error.URLError):
            self.server.shutdown_sessions(under=self.folder + "/")
            for plugin, raw in self._saved_settings.items():
                path = "/lab/api/settings/" + urllib.parse.quote(plugin)
                self.server.api("PUT", path, {"raw": raw})

    def unexpected_page_errors(self) -> list[str]:
        """Uncaught page errors, without the KNOWN_PAGE_ERRORS of JupyterLab itself."""
        return [e for e in self.page_errors if not any(k in e for k in KNOWN_PAGE_ERRORS)]

    # --- internals -------------------------------------------------------------------------

    def _in_lab(self) -> bool:
        """The page shows JupyterLab's default workspace of this server."""
        url = self.page.url.split("?", 1)[0]
        return url == f"{self.server.url}/lab" or url.startswith(f"{self.server.url}/lab/tree/")

    def _left_loaded(self) -> bool:
        """A test before this one left the page a loaded JupyterLab of this server (close())."""
        if self._saved_settings or not self._in_lab():
            return False
        try:
            return bool(self.page.evaluate("() => !!window.jupyterapp && !window.__jt"))
        except PlaywrightError:
            return False

    def _open_path(self) -> Path:
        path: str = self.page.evaluate("() => window.__jt.panel.context.path")
        return self.server.root / path

    def _call(self, script: str, arg: dict[str, Any], timeout: float, what: str) -> Any:
        token = uuid.uuid4().hex
        self.page.evaluate(script, {**arg, "token": token})
        try:
            self.page.wait_for_function(
                _CALL_SETTLED, arg=token, timeout=timeout * 1000, polling=50
            )
        except PlaywrightTimeoutError:
            raise LabError(f"{what} did not finish in {timeout} s") from None
        record = self.page.evaluate("(t) => window.__jtCalls[t]", token)
        if not record["done"]:
            dialogs = self.page.evaluate(_DIALOG_TEXT)
            raise LabError(f"{what} is waiting for a JupyterLab dialog: {dialogs!r}")
        if record["error"]:
            raise LabError(f"{what} failed in the page: {record['error']}")
        return record["value"]


def _file_state(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


@contextlib.contextmanager
def browser_context(browser: Browser) -> Iterator[Page]:
    """A fresh context (cookies, storage) and page, closed afterwards."""
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()
