"""A page reloaded (or closed) during a turn gets the live turn back, and nothing is lost.

The page is loaded again from the file on disk while the kernel still runs the turn: the
running turn shows again where it is, with its text so far and a Stop that stops; when the turn
ends the record takes the widget's place, and the saved file holds it. A turn that ends while
no page is open reaches the notebook the next time a page opens it.

The view a reloaded page (or a second tab) gets is a full one (issue 44): an approval, the
interrupt menu and Stop work from it as from the page that ran the cell, and every page shows
the cell as the kernel has it: ``[*]`` while the turn runs, its execution count once it ended
(Jupyter tells only the page that ran the cell; with collaboration, the shared document kept
``[*]`` for ever once that page had gone).
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser, Locator, expect

from .chat import (
    LOAD,
    PAGES,
    RECORD_MIME,
    SETUP,
    chat_cell,
    final_record,
    message_text,
    open_page,
    reload_page,
    run_setup,
    start_chat,
)
from .lab import Lab, browser_context

# a reloaded page loads its own copy from the file, or joins the server's shared document
pytestmark = [pytest.mark.browser, pytest.mark.both_collaboration_modes]

# about 40 s of streaming unless stopped
STREAMING = (
    "script = [slow(cycle(message('The first half of an answer' + ' and more' * 400)), 0.05)]"
)
# its first words, then held until the test drops `left` (the page has gone), then the rest:
# the turn ends by itself while no page is open, however loaded the machine
SHORT = (
    "answer = cycle(message('A short answer' + ' that ends' * 40))\n"
    "script = [[*answer[:3], FileGate('left'), *answer[3:]]]"
)
# a call to approve, then about 40 s of streaming unless stopped
ADD_THEN_STREAM = (
    "script = [cycle(message('Adding.'), tool_call('add', {'a': 2, 'b': 3})),"
    " slow(cycle(message('The sum is 5' + ' and more' * 800)), 0.05)]"
)
ANSWER = "The sum is 5" + " and more" * 800
# a call to approve, then the answer, held before its first words until the test drops
# `approved` and after about 100 characters until it drops `grown`, then on to its end
ADD_THEN_END = (
    "answer = cycle(message('The sum is 5' + ' and then' * 150 + ' THE END.'))\n"
    "script = [cycle(message('Adding.'), tool_call('add', {'a': 2, 'b': 3})),"
    " [FileGate('approved'), *answer[:24], FileGate('grown'), *answer[24:]]]"
)
CHAT_PROMPT = "[4]:"  # the chat cell runs fourth: after LOAD, SETUP and the script

_LIVE_LENGTH = """(index) => {
  const cell = window.__jt.panel.content.widgets[index];
  const root = cell.node.querySelector(".jt-root:not(.jt-saved)");
  return root ? root.querySelector(".jt-draft")?.textContent.length ?? 0 : -1;
}"""


# counts, in this page, each change of cell ``index``'s outputs that shows a record
_WATCH_RECORDS = f"""(index) => {{
  const outputs = window.__jt.panel.content.widgets[index].model.outputs;
  window.__jtRecordsShown = 0;
  outputs.changed.connect(() => {{
    for (let i = 0; i < outputs.length; i++)
      if ("{RECORD_MIME}" in (outputs.get(i).data ?? {{}})) window.__jtRecordsShown++;
  }});
}}"""


def _grows(lab: Lab, index: int, by: int = 40, *, opening: str = "") -> None:
    """Wait until the running turn's answer in cell ``index`` grows by ``by`` characters;
    ``opening``: the FileGate the answer waits at, opened once its length is read."""
    before: int = lab.page.evaluate(_LIVE_LENGTH, index)
    if opening:
        lab.path(opening).write_text("")
    grown = f"(i) => ({_LIVE_LENGTH})(i) > {before + by}"
    lab.page.wait_for_function(grown, arg=index, polling=100, timeout=30_000)


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
    lab.path("left").write_text("")  # the answer goes on, with no page to show it
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


@pytest.mark.parametrize("page", PAGES)
def test_a_reloaded_page_approves_opens_the_menu_and_stops_the_turn(lab: Lab, page: str) -> None:
    lab.write_notebook("full.ipynb", [LOAD, SETUP, ADD_THEN_STREAM, chat_cell("Add 2 and 3.")])
    open_page(lab, page, "full.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    expect(root.get_by_role("button", name="Approve", exact=True)).to_be_visible()

    reload_page(lab, page, "full.ipynb")  # the approval still waits in the kernel
    live = lab.cell_output(3).locator(".jt-root:not(.jt-saved)")
    expect(lab.prompt(3)).to_have_text("[*]:")  # the kernel runs the cell: so says the page
    live.get_by_role("button", name="Approve", exact=True).click()
    name = lab.user_name()
    expect(live.locator(".jt-chip-approved")).to_have_text(f"approved by {name}")
    expect(live.locator(".jt-draft .jt-message")).to_contain_text("The sum is 5 and more")
    _grows(lab, 3)

    live.locator(".jt-interrupt-menu").click()  # the menu, from this page too
    menu = live.locator(".jt-prompt-interrupt")
    menu.get_by_role("button", name="Continue", exact=True).click()
    expect(menu).to_have_count(0)
    _grows(lab, 3)  # the answer goes on
    live.locator(".jt-stop").click()

    saved = lab.cell_output(3).locator(".jt-root.jt-saved")
    expect(saved.locator(".jt-notice")).to_contain_text(f"Stopped by {name}")
    expect(lab.prompt(3)).to_have_text(CHAT_PROMPT)  # the cell ended, as in the kernel
    kept = message_text(saved).split("Adding.", 1)[-1].strip()
    assert ANSWER.startswith(kept) and len("The sum is 5") < len(kept) < len(ANSWER)  # stopped
    assert lab.unexpected_page_errors() == []


def test_a_second_tab_follows_a_turn_to_its_end_after_the_first_reloads(
    lab: Lab, browser: Browser
) -> None:
    lab.write_notebook("ends.ipynb", [LOAD, SETUP, ADD_THEN_END, chat_cell("Add 2 and 3.")])
    lab.open("ends.ipynb")
    run_setup(lab, 3)
    root = start_chat(lab, 3)
    expect(root.get_by_role("button", name="Approve", exact=True)).to_be_visible()

    lab.page.evaluate(_WATCH_RECORDS, 3)
    with browser_context(browser) as tab:  # a second window, on Notebook 7's page
        second = Lab(lab.server, tab, lab.folder)
        reload_page(second, "notebook7", "ends.ipynb")
        follows = second.cell_output(3).locator(".jt-root:not(.jt-saved)")
        expect(second.prompt(3)).to_have_text("[*]:")
        expect(follows.get_by_role("button", name="Approve", exact=True)).to_be_visible()
        # the page opening mid-turn left the running turn's view as it was, in every page
        # (with collaboration it once put the turn's saved record in its place, for all)
        assert lab.page.evaluate("() => window.__jtRecordsShown") == 0
        lab.reload("ends.ipynb")  # the page that ran the cell goes: no page ran it now
        expect(lab.prompt(3)).to_have_text("[*]:")
        follows.get_by_role("button", name="Approve", exact=True).click()
        _grows(second, 3, opening="approved")  # the second tab sees the answer grow
        lab.path("grown").write_text("")  # the rest of the answer, to its end
        for each in (lab, second):  # and both show its end, as the kernel has it
            saved = each.cell_output(3).locator(".jt-root.jt-saved")
            end = saved.locator(".jt-message").last
            expect(end).to_contain_text("and then THE END.", timeout=90_000)
            expect(saved.locator(".jt-chip-approved")).to_have_text(
                f"approved by {second.user_name()}"
            )
            expect(each.prompt(3)).to_have_text(CHAT_PROMPT)
        assert lab.unexpected_page_errors() == [] and second.unexpected_page_errors() == []
        second.close()
