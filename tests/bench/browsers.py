"""A JupyterLab server of the browser tests and Debian's headless Chromium, for the benchmarks
that measure in a page (B4, B11, B12)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

from tests.browser.server import LabServer, launch_chromium, start_lab_server


@contextmanager
def lab_and_browser(prefix: str) -> Iterator[tuple[LabServer, Browser]]:
    """A Lab server in a temporary folder and a browser, both stopped on leaving."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, sync_playwright() as playwright:
        server = start_lab_server(Path(tmp) / "lab")
        try:
            browser = launch_chromium(playwright)
            try:
                yield server, browser
            finally:
                browser.close()
        finally:
            server.stop()
