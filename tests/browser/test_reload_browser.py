"""A page reloaded (or closed) during a turn gets the live turn back, and nothing is lost.

The page is loaded again from the file on disk while the kernel still runs the turn: the
running turn shows again where it is, with its text so far and a Stop that stops; when the turn
ends the record takes the widget's place, and the saved file holds it. A turn that ends while
no page is open reaches the notebook the next time a page opens it.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser, Locator, expect

from .chat import LOAD, RECORD_MIME, SETUP, chat_cell, final_record, run_setup, start_chat
from .lab import Lab, browser_context

# a reloaded page loads its own copy from the file, or joins the server's shared document
pytestmark = [pytest.mark.browser, pytest.mark.both_collaboration_modes]

# about 40 s of streaming unless stopped
STREAMING = (
    "script = [slow(cycle(message('The first half of an answer' + ' and more' * 400)), 0.05)]"
)
# about 4 s of streaming, then the turn ends by itself
SHORT = "script = [slow(cycle(message('A short answer' + ' that ends' * 40)), 0.1)]"


def test_a_page_reloaded_mid_turn_shows_the_live_turn_and_keeps_its_record(lab: Lab) -> None:
    lab.write_notebook("reload.ipynb", [LOAD, SETUP, STREAMING, chat_cell("Explain x.")])
    lab.open("reload.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    expect(root.locator(".jt-draft .jt-message")).to_contain_text("The first half of an answer")

    lab.reload("reload.ipynb")  # nothing was saved: the file's chat cell has no output
    live = lab.cell_output(3).locator(".jt-root:not(.jt-saved)")
    expect(live.locator(".jt-message")).to_contain_text("The first half of an answer and more")
    stop = live.locator(".jt-stop")
    expect(stop).to_be_visible()
    stop.click()
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-notice")).to_contain_text(f"Stopped by {lab.user_name()}")
    expect(saved.locator(".jt-message")).to_contain_text("The first half of an answer")
    expect(lab.cell_output(3).locator(".jp-OutputArea-output")).to_have_count(1)
    lab.wait_kernel_idle()

    lab.reload("reload.ipynb")  # still unsaved: the kernel hands the record to the new page
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-notice")).to_contain_text(f"Stopped by {lab.user_name()}")
    lab.save()
    cell = lab.read_notebook("reload.ipynb").cells[3]
    assert [sorted(o["data"]) for o in cell.outputs] == [
        sorted([RECORD_MIME, "text/html", "text/plain"])
    ]
    record = final_record(cell)
    assert "live" not in record
    assert record["turn"]["outcome"] != "running"
    assert record["events"][0]["kind"] == "chat_request"
    assert any(e["content"].startswith("The first half") for e in record["events"][1:])
    assert cell.metadata["jupyter_turns"]["in_output"] == RECORD_MIME
    assert lab.unexpected_page_errors() == []


def test_a_turn_that_ends_while_no_page_is_open_reaches_the_notebook(lab: Lab) -> None:
    lab.write_notebook("closed.ipynb", [LOAD, SETUP, SHORT, chat_cell("Explain y.")])
    lab.open("closed.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    expect(root.locator(".jt-draft .jt-message")).to_contain_text("A short answer")
    lab.leave()  # the tab closes; the kernel runs the turn to its end
    deadline = time.monotonic() + 60
    while lab.server.sessions(lab.folder + "/")[0]["kernel"]["execution_state"] != "idle":
        assert time.monotonic() < deadline, "the turn did not end in the kernel"
        time.sleep(0.2)

    lab.reload("closed.ipynb")
    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-message")).to_contain_text("A short answer that ends that ends")
    lab.save()
    record = final_record(lab.read_notebook("closed.ipynb").cells[3])
    assert record["turn"]["outcome"] == "complete"
    assert record["events"][-1]["content"].endswith("that ends")
    assert lab.unexpected_page_errors() == []


def test_a_second_tab_opened_mid_turn_follows_it_and_gets_the_record(
    lab: Lab, browser: Browser
) -> None:
    lab.write_notebook("tabs.ipynb", [LOAD, SETUP, STREAMING, chat_cell("Explain z.")])
    lab.open("tabs.ipynb")
    run_setup(lab, 3)
    first = start_chat(lab, 3)
    expect(first.locator(".jt-draft .jt-message")).to_contain_text("The first half of an answer")

    with browser_context(browser) as page:  # a window of its own: both pages draw
        second = Lab(lab.server, page, lab.folder)
        _follow_in_a_second_page(lab, first, second)


def _follow_in_a_second_page(lab: Lab, first: Locator, second: Lab) -> None:
    second.reload("tabs.ipynb")
    other = second.cell_output(3).locator(".jt-root:not(.jt-saved)")
    expect(other.locator(".jt-message")).to_contain_text("The first half of an answer and more")
    # the first page still follows the turn, and its Stop still stops it
    expect(first.locator(".jt-draft .jt-message")).to_contain_text("and more and more")
    first.locator(".jt-stop").click()
    for page in (lab, second):
        saved = page.cell_output(3).locator(".jt-root.jt-saved")
        expect(saved.locator(".jt-notice")).to_contain_text(f"Stopped by {lab.user_name()}")
        expect(page.cell_output(3).locator(".jp-OutputArea-output")).to_have_count(1)
    second.save()  # the tab opened last saves: the file holds the record all the same
    record = final_record(second.read_notebook("tabs.ipynb").cells[3])
    assert record["events"][0]["kind"] == "chat_request"
    assert "live" not in record
    assert lab.unexpected_page_errors() == [] and second.unexpected_page_errors() == []
