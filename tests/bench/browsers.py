"""A JupyterLab server of the browser tests and Debian's headless Chromium, for the benchmarks
that measure in a page (B4, B11, B12).

A full run gives each benchmark its own server, so that none measures in a server another one
loaded (B11's forty notebooks stay in a collaborative server's memory). The smoke run
(``--quick``), which judges no figure, shares one server among them: starting it is much of a
small benchmark's time. :func:`close_shared` stops it. The browser is each benchmark's own:
Playwright's sync API marks an asyncio loop running in this thread while it is started, which
the other benchmarks' ``asyncio.run`` refuses.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from tests.browser.server import LabServer, launch_chromium, start_lab_server

_shared: tuple[contextlib.ExitStack, LabServer] | None = None


@contextmanager
def lab_and_browser(prefix: str, *, shared: bool = False) -> Iterator[tuple[LabServer, Browser]]:
    """A Lab server in a temporary folder and a browser, both stopped on leaving; with
    ``shared``, the server is the one every shared caller gets, stopped by
    :func:`close_shared`."""
    with contextlib.ExitStack() as stack, sync_playwright() as playwright:
        server = _shared_server(prefix) if shared else _server(stack, prefix)
        browser = launch_chromium(playwright)
        try:
            yield server, browser
        finally:
            browser.close()


def close_shared() -> None:
    """Stop the shared server, if one was started."""
    global _shared
    if _shared is not None:
        stack, _shared = _shared[0], None
        stack.close()


def _shared_server(prefix: str) -> LabServer:
    global _shared
    if _shared is None:
        stack = contextlib.ExitStack()
        try:
            _shared = (stack, _server(stack, prefix))
        except BaseException:
            stack.close()
            raise
    return _shared[1]


def _server(stack: contextlib.ExitStack, prefix: str) -> LabServer:
    tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix))
    server = start_lab_server(Path(tmp) / "lab")
    stack.callback(server.stop)
    return server
