"""A JupyterLab server of the browser tests and Debian's headless Chromium, for the benchmarks
that measure in a page (B4, B11, B12).

A full run gives each benchmark its own server, so that none measures in a server another one
loaded (B11's forty notebooks stay in a collaborative server's memory). The smoke run
(``--quick``), which judges no figure, shares one server and browser among them: starting them
is most of a small benchmark's time. :func:`close_shared` stops the shared pair.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from tests.browser.server import LabServer, launch_chromium, start_lab_server

_shared: tuple[contextlib.ExitStack, LabServer, Browser] | None = None


@contextmanager
def lab_and_browser(prefix: str, *, shared: bool = False) -> Iterator[tuple[LabServer, Browser]]:
    """A Lab server in a temporary folder and a browser, both stopped on leaving; with
    ``shared``, the pair every shared caller gets, stopped by :func:`close_shared`."""
    if not shared:
        with contextlib.ExitStack() as stack:
            yield _start(stack, prefix)
        return
    global _shared
    if _shared is None:
        stack = contextlib.ExitStack()
        try:
            _shared = (stack, *_start(stack, prefix))
        except BaseException:
            stack.close()
            raise
    yield _shared[1], _shared[2]


def close_shared() -> None:
    """Stop the shared server and browser, if any was started."""
    global _shared
    if _shared is not None:
        stack, _shared = _shared[0], None
        stack.close()


def _start(stack: contextlib.ExitStack, prefix: str) -> tuple[LabServer, Browser]:
    tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix))
    playwright = stack.enter_context(sync_playwright())
    server = start_lab_server(Path(tmp) / "lab")
    stack.callback(server.stop)
    browser = launch_chromium(playwright)
    stack.callback(browser.close)
    return server, browser
