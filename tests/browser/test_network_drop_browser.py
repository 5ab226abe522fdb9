"""A page that loses its connection to the kernel mid-turn and gets it back (issue 32, point 2):
the running turn shows where it is, its Stop stops it, and the record lands when it ends.

The drop is the network's: the browser goes offline and the kernel's websocket is cut, so
JupyterLab reconnects by itself once the network is back; what the kernel sent meanwhile never
reached the page (the lab extension announces the page again on reconnect, and the kernel
re-sends the running turn: docs/architecture.md, "Pages opened later, and who clicked").
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from .chat import LOAD, SETUP, chat_cell, final_record, run_setup, start_chat
from .lab import Lab

pytestmark = [pytest.mark.browser, pytest.mark.own_context, pytest.mark.timeout(400)]

# about 40 s of streaming unless stopped
STREAMING = (
    "script = [slow(cycle(message('The first half of an answer' + ' and more' * 400)), 0.05)]"
)

_CUT = "() => window.__jt.panel.sessionContext.session.kernel._ws?.close()"
_STATUS = "window.__jt.panel.sessionContext.session.kernel.connectionStatus"
_DROPPED = f"() => {_STATUS} !== 'connected'"
_CONNECTED = f"() => {_STATUS} === 'connected'"


def _text_length(lab: Lab, index: int) -> int:
    script = """(index) => {
      const cell = window.__jt.panel.content.widgets[index];
      const root = cell.node.querySelector(".jt-root:not(.jt-saved)");
      return root ? root.textContent.length : 0;
    }"""
    length: int = lab.page.evaluate(script, index)
    return length


def test_a_page_that_reconnects_mid_turn_follows_it_stops_it_and_gets_the_record(
    lab: Lab,
) -> None:
    lab.write_notebook("drop.ipynb", [LOAD, SETUP, STREAMING, chat_cell("Explain x.")])
    lab.open("drop.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    expect(root.locator(".jt-draft .jt-message")).to_contain_text("The first half of an answer")

    lab.page.context.set_offline(True)
    lab.page.evaluate(_CUT)
    # offline, the socket's closing handshake cannot finish: Chromium gives up on it after a
    # while, longer than 30 s on a loaded machine (once seen), then the page sees the drop
    lab.page.wait_for_function(_DROPPED, polling=50, timeout=120_000)
    before = _text_length(lab, 3)
    time.sleep(2)  # the kernel streams on; none of it reaches the page
    assert _text_length(lab, 3) == before  # (the page did lose its connection)
    lab.page.context.set_offline(False)
    lab.page.wait_for_function(_CONNECTED, timeout=60_000)

    live = lab.cell_output(3).locator(".jt-root:not(.jt-saved)")
    # the turn as it is now: more than the page had when it lost the connection
    lab.page.wait_for_function(
        """([index, before]) => {
          const cell = window.__jt.panel.content.widgets[index];
          const root = cell.node.querySelector(".jt-root:not(.jt-saved)");
          return !!root && root.textContent.length > before + 200;
        }""",
        arg=[3, before],
        timeout=30_000,
    )
    stop = live.locator(".jt-stop")
    expect(stop).to_be_visible()
    stop.click()
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-notice")).to_contain_text(f"Stopped by {lab.user_name()}")
    expect(saved.locator(".jt-message")).to_contain_text("The first half of an answer and more")
    expect(lab.cell_output(3).locator(".jp-OutputArea-output")).to_have_count(1)
    lab.wait_kernel_idle()
    lab.save()
    record = final_record(lab.read_notebook("drop.ipynb").cells[3])
    assert "live" not in record
    assert record["events"][0]["kind"] == "chat_request"
    assert any(e["content"].startswith("The first half") for e in record["events"][1:])
    assert lab.unexpected_page_errors() == []
