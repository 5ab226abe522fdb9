"""Browser-test fixtures: a JupyterLab server and Chromium for this package, a `Lab` per test.

The server and the browser live as long as the tests of this package (scope "package"), not the
whole session: Playwright's sync API keeps its asyncio loop marked as running in the main thread
while it is started, so any later `asyncio.run()` — pytest-asyncio's tests in tests/unit and
tests/kernel — would fail with "cannot be called from a running event loop". For the same
reason browser tests are plain (sync) functions.

Every test collected under tests/browser/ is marked `browser` (deselect with `-m "not browser"`).
With jupyter-collaboration installed the server has real-time collaboration on (server.py): the
notebook is one document the server keeps and saves. A test marked `both_collaboration_modes`
runs twice (ids `[shared]` and `[solo]`), the second time on a server with it off (each page its
own copy, saved by the page, as for a user without the package): the scenarios where a page's
copy and the shared document differ (reloads, two pages on one notebook) stay tested both ways.
On failure the test's page is saved to test-artifacts/browser/<test>.png, with the browser
console, page errors and the server log's tail in <test>.log next to it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from . import server
from .lab import Lab, browser_context
from .server import (
    ARTIFACTS,
    LabServer,
    launch_chromium,
    launch_profile,
    safe_name,
    start_lab_server,
)

_HERE = Path(__file__).parent

# Playwright's assertions wait 5 s by default; a first widget render on a loaded two-core CI
# machine can take longer. Assertions still return as soon as they hold.
expect.set_options(timeout=15_000)

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("both_collaboration_modes") is not None:
        metafunc.parametrize("collaboration", [True, False], ids=["shared", "solo"])


@pytest.fixture
def collaboration() -> bool:
    """Whether the test's `lab` has real-time collaboration on (where it is installed)."""
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)
            if (
                config.pluginmanager.hasplugin("timeout")
                and item.get_closest_marker("timeout") is None
            ):
                # Generous: the first test also pays for starting the server and the browser.
                item.add_marker(pytest.mark.timeout(180))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


@pytest.fixture(scope="package")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """A JupyterLab server for the browser tests, isolated from the user's Jupyter setup."""
    started = start_lab_server(tmp_path_factory.mktemp("jupyterlab"), lean=True)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="package")
def solo_lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """A server like `lab_server` with real-time collaboration off (where it is installed):
    notebooks are each page's own document, saved by the page, as without jupyter-collaboration.
    Started only for the `[solo]` runs of tests marked `both_collaboration_modes`."""
    started = start_lab_server(
        tmp_path_factory.mktemp("jupyterlab-solo"), collaboration=False, lean=True
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    """Playwright's driver (one per thread: `browser` and `profile` share it)."""
    if not server.CHROMIUM.exists():
        pytest.skip(
            f"browser tests need Debian's Chromium at {server.CHROMIUM}: "
            "run `apt-get install chromium` "
            "(./dev.sh test installs it when run as root)"
        )
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Debian's headless Chromium, for pages that need a context of their own: a second user
    (`browser_context(browser)`), or a test marked `own_context`."""
    browser = launch_chromium(playwright)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="package")
def profile(
    playwright: Playwright, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrowserContext]:
    """One Chromium profile on disk whose pages the tests' `lab` opens, one per test: its code
    cache makes each JupyterLab load after the first a third cheaper (server.launch_profile);
    page loads were most of the suite's CPU."""
    context = launch_profile(playwright, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="package")
def resident_pages() -> dict[str, Page]:
    """Each server's page in the profile, which its tests take in turn: `Lab.close` leaves it
    a loaded JupyterLab with no document open, and the next test's first `Lab.open` opens its
    notebook there instead of loading JupyterLab again."""
    return {}


@pytest.fixture
def lab(
    profile: BrowserContext,
    collaboration: bool,
    resident_pages: dict[str, Page],
    request: pytest.FixtureRequest,
) -> Iterator[Lab]:
    """The server's resident page in the shared profile; notebooks go in the test's own
    folder. A test marked `own_context` (it changes its context: init scripts, exposed
    functions, offline) gets a fresh browser context instead. After a failed test the page is
    not left loaded: the next one loads JupyterLab anew.

    `profile` comes first so that a missing Chromium skips before the server starts. A `[solo]`
    run gets the server without real-time collaboration.
    """
    server = "lab_server" if collaboration else "solo_lab_server"
    lab_server: LabServer = request.getfixturevalue(server)
    name = safe_name(request.node.nodeid.split("::", 1)[-1])
    folder = safe_name(request.node.nodeid.replace("tests/browser/", ""))
    own = request.node.get_closest_marker("own_context") is not None
    with contextlib.ExitStack() as stack:
        if own:
            page = stack.enter_context(browser_context(request.getfixturevalue("browser")))
        else:
            page = resident_pages.get(lab_server.url)
            if page is None or page.is_closed():
                page = resident_pages[lab_server.url] = profile.new_page()
            page.bring_to_front()  # a page in the background draws nothing
        lab = Lab(lab_server, page, folder)
        try:
            yield lab
        finally:
            reports = request.node.stash.get(_REPORTS, {})
            failed = any(report.failed for report in reports.values())
            if failed:
                _save_failure_evidence(lab, name)
            lab.close(keep_loaded=not failed and not own)


def _save_failure_evidence(lab: Lab, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        lab.screenshot(ARTIFACTS / f"{name}.png")
    except PlaywrightError as exc:  # the page may be gone; the log below still helps
        lab.console.append(f"[screenshot failed] {exc}")
    (ARTIFACTS / f"{name}.log").write_text(
        "== console\n"
        + "\n".join(lab.console)
        + "\n== page errors\n"
        + "\n".join(lab.page_errors)
        + "\n== failed requests\n"
        + "\n".join(lab.failed_requests)
        + "\n== server log (tail)\n"
        + lab.server.log_tail(80)
        + "\n"
    )
